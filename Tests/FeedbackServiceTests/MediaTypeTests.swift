import Testing

@testable import FeedbackService

/// Which `Content-Type` values a posted body may carry: JSON in any case, with parameters and spaces.
@Suite struct MediaTypeTests {
    @Test(arguments: [
        "application/json", "Application/JSON", "application/json; charset=utf-8", "  application/json\t;q=1",
        "application/vnd.api+json", "APPLICATION/PROBLEM+JSON; x=y",
    ])
    func acceptsJSON(_ value: String) {
        #expect(SessionService.isJSONMediaType(value))
    }

    @Test(arguments: [
        "", "text/json", "application/jsonx", "application/xjson", "application/", "application/+json",
        "json", "text/plain; type=application/json", "application/x-www-form-urlencoded",
    ])
    func refusesOtherTypes(_ value: String) {
        #expect(!SessionService.isJSONMediaType(value))
    }
}
