import Systems
import Testing

@testable import FeedbackService

@Suite struct SessionRecorderTests {
    private func type(_ json: String) -> String? {
        SessionRecorder<CounterSystem>.topLevelType(Array(json.utf8))
    }

    @Test func findsTheTopLevelTypeWhereverItIs() {
        #expect(type(#"{"type":"add","amount":2}"#) == "add")
        #expect(type(#"{"amount":2,"type":"add"}"#) == "add")
    }

    @Test func ignoresNestedTypesAndStringsThatLookLikeKeys() {
        #expect(type(#"{"inner":{"type":"x"},"type":"y"}"#) == "y")
        #expect(type(#"{"note":"type","type":"z"}"#) == "z")
        #expect(type(#"{"a":"\"type\":\"no\"","type":"q"}"#) == "q")
        #expect(type(#"{"list":[{"type":"x"}],"type":"w"}"#) == "w")
    }

    @Test func hasNoAnswerWithoutAPlainStringType() {
        #expect(type(#"{"type":"a\"b"}"#) == nil)
        #expect(type(#"{"type":3}"#) == nil)
        #expect(type(#"{"inner":{"type":"x"}}"#) == nil)
        #expect(type("[]") == nil)
        #expect(type("") == nil)
    }
}
