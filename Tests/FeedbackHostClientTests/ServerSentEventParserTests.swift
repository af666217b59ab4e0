import Testing

@testable import FeedbackHostClient

struct ServerSentEventParserTests {
    static let stream = Array(
        (": feedbackhost stream\r\nretry: 2520\r\n\r\nevent: snapshot\nid: 7-0\ndata: {\"rev\":0}\n\n"
            + "event: patch\rid: 7-1\rdata: {\"base\":0,\r\r" + "data:a\ndata: b\n\n"
            + "event: moved\nretry: 100\ndata: {}\n\n")
            .utf8
    )

    static let expected = [
        ServerSentEvent(type: "snapshot", id: "7-0", data: #"{"rev":0}"#),
        ServerSentEvent(type: "patch", id: "7-1", data: #"{"base":0,"#),
        ServerSentEvent(type: "message", id: "7-1", data: "a\nb"),
        ServerSentEvent(type: "moved", id: "7-1", data: "{}"),
    ]

    /// The verdict never depends on where a read ended: whole, and in 1-, 2-, 3- and 7-byte pieces.
    @Test(arguments: [Self.stream.count, 1, 2, 3, 7])
    func eventsAreTheSameHoweverTheBytesArrive(_ piece: Int) {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        var start = 0
        while start < Self.stream.count {
            let end = min(start + piece, Self.stream.count)
            events += parser.feed(Self.stream[start..<end])
            start = end
        }
        #expect(events == Self.expected)
        #expect(parser.retryMilliseconds == 100)
    }
}
