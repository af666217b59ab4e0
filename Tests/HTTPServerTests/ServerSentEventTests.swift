import Testing

@testable import HTTPServer

/// A client-side event-stream interpreter written from the WHATWG HTML standard's
/// "Interpreting an event stream" steps, independent of the encoder under test.
private struct EventStreamParser {
    struct Dispatched: Equatable {
        var type: String
        var data: String
        var lastEventID: String
    }

    private(set) var events: [Dispatched] = []
    private(set) var reconnectionTime: Int?
    private var dataBuffer = ""
    private var eventTypeBuffer = ""
    private var lastEventIDBuffer = ""

    mutating func feed(_ bytes: [UInt8]) {
        var text = String(decoding: bytes, as: UTF8.self).unicodeScalars[...]
        if text.first == "\u{FEFF}" { text = text.dropFirst() }
        var line = String.UnicodeScalarView()
        var index = text.startIndex
        while index < text.endIndex {
            let scalar = text[index]
            if scalar == "\r" || scalar == "\n" {
                process(String(line))
                line = String.UnicodeScalarView()
                let next = text.index(after: index)
                if scalar == "\r", next < text.endIndex, text[next] == "\n" {
                    index = next
                }
            } else {
                line.append(scalar)
            }
            index = text.index(after: index)
        }
        // An unterminated last line is never processed.
    }

    private mutating func process(_ line: String) {
        if line.isEmpty {
            dispatch()
            return
        }
        if line.unicodeScalars.first == ":" { return }
        let field: String
        var value: Substring.UnicodeScalarView
        if let colon = line.unicodeScalars.firstIndex(of: ":") {
            field = String(line.unicodeScalars[..<colon])
            value = line.unicodeScalars[line.unicodeScalars.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            field = line
            value = ""[...].unicodeScalars
        }
        let valueString = String(value)
        switch field {
        case "event": eventTypeBuffer = valueString
        case "data": dataBuffer += valueString + "\n"
        case "id": if !valueString.unicodeScalars.contains("\u{0}") { lastEventIDBuffer = valueString }
        case "retry":
            if !valueString.isEmpty, valueString.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) {
                reconnectionTime = Int(valueString)
            }
        default: break
        }
    }

    private mutating func dispatch() {
        if dataBuffer.isEmpty {
            eventTypeBuffer = ""
            return
        }
        if dataBuffer.hasSuffix("\n") { dataBuffer.removeLast() }
        events.append(
            Dispatched(
                type: eventTypeBuffer.isEmpty ? "message" : eventTypeBuffer,
                data: dataBuffer,
                lastEventID: lastEventIDBuffer
            )
        )
        dataBuffer = ""
        eventTypeBuffer = ""
    }
}

struct ServerSentEventTests {
    static let trickyStrings: [String] = [
        "", "plain", "\r", "\n", "\r\n", "\n\r", "\r\r", "\n\n", "a\rb\nc\r\nd", "trailing\n", "\nleading",
        "\nevent: x", "\r\nevent: x\r\n\r\ndata: forged", "data: y", "id: 7", "retry: 1", ": comment",
        " leading space", "  two spaces", "trailing space ", "\t tab", "ünïcødé ✓ 🎉", "\u{FEFF}bom",
        "\u{2028}line separator\u{2029}", "nul\u{0}inside", "colon: inside", "::", "event", "\n\n\n",
    ]

    /// What a client can receive for `data`: CR and CRLF arrive as LF.
    static func normalizedLineBreaks(_ text: String) -> String {
        text.replacingCRLFAndCR()
    }

    static func strippedControls(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "\r" && $0 != "\n" && $0 != "\u{0}" }))
    }

    @Test func eventWithAllFieldsHasLiteralFraming() {
        let event = ServerSentEvent(id: "42", event: "state", data: "{\"n\":1}", retry: 1500)
        #expect(event.encoded == Array("event: state\nid: 42\nretry: 1500\ndata: {\"n\":1}\n\n".utf8))
    }

    @Test func dataOnlyEventHasLiteralFraming() {
        #expect(ServerSentEvent(data: "hello").encoded == Array("data: hello\n\n".utf8))
    }

    @Test func multiLineDataBecomesOneDataLinePerLine() {
        let event = ServerSentEvent(data: "a\nb\r\nc\rd")
        #expect(event.encoded == Array("data: a\ndata: b\ndata: c\ndata: d\n\n".utf8))
    }

    @Test func emptyDataIsOneEmptyDataLine() {
        #expect(ServerSentEvent(data: "").encoded == Array("data: \n\n".utf8))
    }

    @Test func lineBreaksAndNulAreRemovedFromIDAndEvent() {
        let event = ServerSentEvent(id: "1\n\0event: x", event: "a\r\nb", data: "d")
        #expect(event.encoded == Array("event: ab\nid: 1event: x\ndata: d\n\n".utf8))
    }

    @Test func negativeRetryIsLeftOut() {
        #expect(ServerSentEvent(data: "d", retry: -5).encoded == Array("data: d\n\n".utf8))
    }

    @Test func encodeAppendsToExistingBuffer() {
        var buffer = Array("prefix".utf8)
        ServerSentEvent(data: "x").encode(into: &buffer)
        #expect(buffer == Array("prefixdata: x\n\n".utf8))
    }

    @Test func commentIsOneCommentLinePerLineThenBlankLine() {
        #expect(ServerSentEvent.comment("ping") == Array(": ping\n\n".utf8))
        #expect(ServerSentEvent.comment("a\r\nevent: x\rdata: y\n") == Array(": a\n: event: x\n: data: y\n:\n\n".utf8))
        #expect(ServerSentEvent.comment("") == Array(":\n\n".utf8))
    }

    @Test(arguments: trickyStrings)
    func clientReconstructsDataExactly(data: String) {
        var parser = EventStreamParser()
        parser.feed(ServerSentEvent(data: data).encoded)
        #expect(parser.events == [.init(type: "message", data: Self.normalizedLineBreaks(data), lastEventID: "")])
    }

    @Test(arguments: trickyStrings)
    func clientReconstructsIDAndEventWithoutForgedFields(value: String) {
        var parser = EventStreamParser()
        parser.feed(ServerSentEvent(id: value, event: value, data: value, retry: 3000).encoded)
        let stripped = Self.strippedControls(value)
        let expected = EventStreamParser.Dispatched(
            type: stripped.isEmpty ? "message" : stripped,
            data: Self.normalizedLineBreaks(value),
            lastEventID: stripped
        )
        #expect(parser.events == [expected])
        #expect(parser.reconnectionTime == 3000)
    }

    @Test(arguments: trickyStrings)
    func commentNeverProducesAnEventOrField(text: String) {
        var parser = EventStreamParser()
        parser.feed(ServerSentEvent.comment(text) + ServerSentEvent(data: "after").encoded)
        #expect(parser.events == [.init(type: "message", data: "after", lastEventID: "")])
        #expect(parser.reconnectionTime == nil)
    }

    @Test func consecutiveEventsKeepTheirBoundaries() {
        var bytes: [UInt8] = []
        for value in Self.trickyStrings {
            ServerSentEvent(id: value, data: value).encode(into: &bytes)
        }
        var parser = EventStreamParser()
        parser.feed(bytes)
        #expect(parser.events.map(\.data) == Self.trickyStrings.map(Self.normalizedLineBreaks))
        #expect(parser.events.map(\.lastEventID) == Self.trickyStrings.map(Self.strippedControls))
    }
}

extension String {
    fileprivate func replacingCRLFAndCR() -> String {
        var scalars = String.UnicodeScalarView()
        var previousWasCR = false
        for scalar in unicodeScalars {
            if scalar == "\n" && previousWasCR {
                previousWasCR = false
                continue
            }
            previousWasCR = scalar == "\r"
            scalars.append(scalar == "\r" ? "\n" : scalar)
        }
        return String(scalars)
    }
}

@Suite struct ServerSentEventBytesTests {
    @Test func framesBytesExactlyAsTheValueDoes() {
        let cases = [
            ServerSentEvent(id: "7", event: "patch", data: "{\"a\":1}"),
            ServerSentEvent(id: "a\r\nb\0", event: "x\ny", data: "one\r\ntwo\rthree\n", retry: 10),
            ServerSentEvent(data: ""),
        ]
        for event in cases {
            var out: [UInt8] = []
            ServerSentEvent.append(
                event: event.event.map { Array($0.utf8) },
                id: event.id.map { Array($0.utf8) },
                retry: event.retry,
                data: Array(event.data.utf8),
                to: &out
            )
            #expect(out == event.encoded)
        }
        #expect(ServerSentEvent.retry(milliseconds: 3000) == Array("retry: 3000\n\n".utf8))
        #expect(ServerSentEvent.retry(milliseconds: -1).isEmpty)
        #expect(ServerSentEvent.comment("") == Array(":\n\n".utf8))
        var plain: [UInt8] = []
        ServerSentEvent.append(data: Array("hi".utf8), to: &plain)
        #expect(plain == Array("data: hi\n\n".utf8))
    }
}
