import Testing

@testable import HTTPServer

@Suite struct ProblemTests {
    @Test func encodesTheStandardMembersSortedByName() {
        let problem = Problem(status: 404, detail: "No resource at /x.")
        #expect(
            String(decoding: problem.body, as: UTF8.self)
                == #"{"detail":"No resource at /x.","status":404,"title":"Not Found","type":"about:blank"}"#
        )
    }

    @Test func mergesExtensionMembersInNameOrderAndKeepsTheStandardOnes() {
        let problem = Problem(
            type: "urn:example:problem:late",
            title: "Late",
            status: 422,
            detail: "d",
            extensions: ["allow": Array(#"["GET"]"#.utf8), "zone": Array("1".utf8), "status": Array("0".utf8)]
        )
        #expect(
            String(decoding: problem.body, as: UTF8.self)
                == #"{"allow":["GET"],"detail":"d","status":422,"title":"Late","type":"urn:example:problem:late","zone":1}"#
        )
    }

    @Test func escapesQuotesBackslashesAndControlBytes() {
        let problem = Problem(status: 400, detail: "a\"b\\c\nd\re\tf\u{1}g\u{1f}h é")
        let body = String(decoding: problem.body, as: UTF8.self)
        #expect(body.contains(#""detail":"a\"b\\c\nd\re\tf\u0001g\u001fh é""#))
    }

    @Test func answersWithTheProblemContentType() {
        let response = Problem(status: 503, detail: "x").response(headers: HTTPHeaders([("Retry-After", "1")]))
        #expect(response.status == 503)
        #expect(response.headers["content-type"] == "application/problem+json")
        #expect(response.headers["retry-after"] == "1")
    }

    @Test func theOverCapacityAnswerCountsItsOwnBody() throws {
        let text = String(decoding: ServerCore.overCapacity, as: UTF8.self)
        let parts = text.split(separator: "\r\n\r\n", maxSplits: 1, omittingEmptySubsequences: false)
        #expect(parts.count == 2)
        let body = try #require(parts.last)
        #expect(text.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
        #expect(text.contains("\r\nContent-Length: \(body.utf8.count)\r\n"))
        #expect(text.contains("\r\nConnection: close\r\n"))
        #expect(Array(body.utf8) == Problem(status: 503, detail: "Too many connections.").body)
    }
}
