import Testing

@testable import HTTPServer

/// `HTTPHeaders` keeps its fields in one buffer, each behind its name's and value's lengths: what goes in comes out in
/// order, with names and values of any length (empty ones too), and lookups ignore the name's case.
@Suite struct HTTPHeadersTests {
    @Test func fieldsComeBackInOrderWithTheirOwnCase() {
        var headers = HTTPHeaders([("Content-Type", "application/json"), ("X-Empty", "")])
        headers.add(name: "Vary", value: "Origin")
        headers.add(name: "vary", value: "Accept-Encoding")
        #expect(headers.count == 4)
        #expect(
            Array(headers).map { "\($0.name)=\($0.value)" }
                == ["Content-Type=application/json", "X-Empty=", "Vary=Origin", "vary=Accept-Encoding"]
        )
        #expect(headers["content-type"] == "application/json")
        #expect(headers["X-EMPTY"] == "")
        #expect(headers.values("VARY") == ["Origin", "Accept-Encoding"])
        #expect(headers["missing"] == nil)
        #expect(!headers.contains("vary-"))
    }

    @Test func oneFieldMadeAtOnceIsTheSameAsAdded() {
        var added = HTTPHeaders()
        added.add(name: "Content-Type", value: "application/json")
        #expect(HTTPHeaders(name: "Content-Type", value: "application/json") == added)
        #expect(
            HTTPHeaders(name: "Content-Type", value: "application/json")
                == HTTPHeaders([("Content-Type", "application/json")])
        )
    }

    /// An answer's two fields made at once, the second's value written into its room, are the fields added one by
    /// one, and more fields still go after them; a value longer than its room is cut to it.
    @Test func twoFieldsMadeAtOnceAreTheSameAsAdded() {
        let tag = Array(#""1234567890-42""#.utf8)
        var made = HTTPHeaders("Content-Type", "application/json", "ETag", valueCapacity: 43) { out in
            out.initialize(from: tag, count: tag.count)
            return tag.count
        }
        var added = HTTPHeaders([("Content-Type", "application/json")])
        added.add(name: "ETag", value: #""1234567890-42""#)
        #expect(made == added)
        #expect(made["etag"] == #""1234567890-42""#)
        made.add(name: "Cache-Control", value: "no-cache")
        added.add(name: "Cache-Control", value: "no-cache")
        #expect(made == added)
        let empty = HTTPHeaders("Content-Type", "application/json", "X-None", valueCapacity: 0) { _ in 0 }
        #expect(empty["x-none"] == "" && empty.count == 2)
        let cut = HTTPHeaders("Content-Type", "application/json", "X-Cut", valueCapacity: 2) { out in
            out.initialize(repeating: UInt8(ascii: "a"), count: 2)
            return 5
        }
        #expect(cut["x-cut"] == "aa")
    }

    /// The package's answers' fields, written from literals (and a value judged as it is written), are sendable
    /// without the writer's byte-by-byte check; a value written with a CR is not, and any field added afterwards, a
    /// handler's, sends the list through the check again.
    @Test func onlyThePackagesOwnFieldsSkipTheResponseWritersCheck() {
        let tag = Array(#""7-42""#.utf8)
        var answer = HTTPHeaders("Content-Type", "application/json", "ETag", valueCapacity: 16) { out in
            out.initialize(from: tag, count: tag.count)
            return tag.count
        }
        #expect(answer.knownValid && ResponseWriter.isValid(answer))
        #expect(HTTPHeaders("Content-Type", "application/json").knownValid)
        let split = HTTPHeaders("Content-Type", "application/json", "ETag", valueCapacity: 16) { out in
            out.initialize(from: Array("a\r\nX: y".utf8), count: 7)
            return 7
        }
        #expect(!split.knownValid && !ResponseWriter.isValid(split))
        answer.add(name: "X-Injected", value: "a\r\nSet-Cookie: b")
        #expect(!answer.knownValid && !ResponseWriter.isValid(answer))
        var handlers = HTTPHeaders([("Content-Type", "application/json")])
        #expect(!handlers.knownValid && ResponseWriter.isValid(handlers))
        handlers.add(name: "Bad Name", value: "x")
        #expect(!ResponseWriter.isValid(handlers))
    }

    @Test func aValueWrittenInPlaceReadsAsTheSameString() {
        var written = HTTPHeaders([("Content-Type", "application/json")])
        written.add(name: "ETag") { out in out.append(contentsOf: #""12-34""#.utf8) }
        written.add(name: "X-None") { _ in }
        written.add(name: "After", value: "yes")
        var added = HTTPHeaders([("Content-Type", "application/json")])
        added.add(name: "ETag", value: #""12-34""#)
        added.add(name: "X-None", value: "")
        added.add(name: "After", value: "yes")
        #expect(written == added)
        #expect(written["etag"] == #""12-34""#)
        #expect(written["x-none"] == "")
        #expect(written["after"] == "yes")
    }

    @Test func valueBytesFindTheFirstFieldOfTheName() {
        let headers = HTTPHeaders([("Accept", "a"), ("content-TYPE", "text/plain"), ("Content-Type", "x")])
        #expect(headers.valueBytes("Content-Type").map { Array($0) } == Array("text/plain".utf8))
        #expect(headers.valueBytes("Host") == nil)
    }

    @Test func longNamesAndValuesAndRemovalKeepTheRest() {
        let long = String(repeating: "v", count: 70_000)
        var headers = HTTPHeaders()
        headers.add(name: "A", value: "1")
        headers.add(name: "Long", value: long)
        headers.add(name: "B", value: "2")
        #expect(headers["long"] == long)
        headers.remove(name: "long")
        #expect(Array(headers).map(\.name) == ["A", "B"])
        #expect(headers["b"] == "2")
    }

    @Test func theParsersFieldsAreTheSameAsAddedOnes() throws {
        let bytes = Array("GET / HTTP/1.1\r\nHost: h\r\nX-A:  spaced value \r\nx-b:\r\n\r\n".utf8)
        var parser = RequestParser()
        let result = try bytes.withUnsafeBufferPointer { (buffer) throws(HTTPServerError) in
            try parser.parseHead(buffer)
        }
        guard case .head(let parsed, _) = result else {
            Issue.record("the head did not parse: \(result)")
            return
        }
        let added = HTTPHeaders([("Host", "h"), ("X-A", "spaced value"), ("x-b", "")])
        #expect(parsed.headers == added)
    }

    @Test func aLookupFindsFieldsOfEveryNameLengthAndNoneOfLengthsAbsent() {
        var headers = HTTPHeaders()
        let names = (1...70).filter { $0 % 5 == 0 }.map { String(repeating: "N", count: $0) }
        for name in names { headers.add(name: name, value: "v\(name.count)") }
        for length in 1...140 {
            let name = String(repeating: "n", count: length)  // another case: lookups ignore it
            #expect(headers[name] == (length % 5 == 0 && length <= 70 ? "v\(length)" : nil), "length \(length)")
        }
        // 3 and 67 share a bit of the lengths' mask: the walk still compares lengths and bytes.
        var two = HTTPHeaders()
        two.add(name: "abc", value: "1")
        #expect(two[String(repeating: "a", count: 67)] == nil)
        #expect(two["ABC"] == "1")
        var removed = two
        removed.remove(name: "abc")
        #expect(removed["abc"] == nil && removed.count == 0)
    }
}
