import Testing

@testable import FeedbackService

struct SessionIDTests {
    @Test func randomIdsAre22Base64URLCharactersAndParseBack() {
        for _ in 0..<1000 {
            let id = SessionID.random()
            #expect(id.description.utf8.count == 22)
            #expect(SessionID(id.description) == id)
        }
    }

    /// An id is held as its bytes: parsed from a string or from bytes, it is the same id, prints as its text, and
    /// equal ids hash alike while ids that differ in any place (the last six characters too, which the hash leaves out)
    /// are not equal.
    @Test func anIdParsedFromBytesIsTheIdOfItsTextAndDiffersInEveryPlace() {
        for _ in 0..<200 {
            let id = SessionID.random()
            let text = id.description
            let fromBytes = Array(text.utf8).withUnsafeBufferPointer { SessionID(utf8: $0) }
            #expect(fromBytes == id)
            #expect(fromBytes?.description == text)
            #expect(fromBytes?.hashValue == id.hashValue)
            var appended = Array("x".utf8)
            id.appendText(to: &appended)
            #expect(String(decoding: appended, as: UTF8.self) == "x" + text)
            for place in 0..<21 {
                var bytes = Array(text.utf8)
                bytes[place] = bytes[place] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
                let other = bytes.withUnsafeBufferPointer { SessionID(utf8: $0) }
                #expect(other != nil && other != id, "place \(place)")
            }
        }
        #expect(
            Array("AAAAAAAAAAAAAAAAAAAAAw".utf8).withUnsafeBufferPointer { SessionID(utf8: $0) }?.description
                == "AAAAAAAAAAAAAAAAAAAAAw"
        )
        #expect(Array("AAAAAAAAAAAAAAAAAAAAAB".utf8).withUnsafeBufferPointer { SessionID(utf8: $0) } == nil)
        #expect(Array("AAAAAAAAAAAAAAAAAAAAA".utf8).withUnsafeBufferPointer { SessionID(utf8: $0) } == nil)
    }

    @Test func randomIdsDoNotRepeat() {
        let ids = Set((0..<10_000).map { _ in SessionID.random() })
        #expect(ids.count == 10_000)
    }

    @Test func base64URLMatchesRFC4648Vectors() {
        #expect(SessionID.base64URL(Array("f".utf8)) == "Zg")
        #expect(SessionID.base64URL(Array("fo".utf8)) == "Zm8")
        #expect(SessionID.base64URL(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(SessionID.base64URL([0xFB, 0xFF]) == "-_8")
    }

    @Test func malformedIdsAreRefused() {
        #expect(SessionID("") == nil)
        #expect(SessionID("AAAAAAAAAAAAAAAAAAAAA") == nil)  // 21
        #expect(SessionID("AAAAAAAAAAAAAAAAAAAAAAA") == nil)  // 23
        #expect(SessionID("AAAAAAAAAAAAAAAAAAAA+A") == nil)
        #expect(SessionID("AAAAAAAAAAAAAAAAAAAAAB") == nil)  // non-zero padding bits
        #expect(SessionID("AAAAAAAAAAAAAAAAAAAAAw") != nil)
    }

    /// The parse judges bytes by a bit map of the alphabet: every byte value, at each of the first 21 places (the
    /// last holds the padding bits), is taken exactly when it is one of the 64 characters.
    @Test func everyByteValueAtEveryPlaceIsJudgedByTheAlphabet() {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for place in 0..<21 {
            for value in 0...255 {
                var bytes = Array("AAAAAAAAAAAAAAAAAAAAAA".utf8)
                bytes[place] = UInt8(value)
                let text = String(decoding: bytes, as: UTF8.self)
                // A byte from 128 on is not UTF-8 alone: decoded, it becomes U+FFFD (three bytes), and the id's length
                // is wrong as well as its characters.
                #expect((SessionID(text) != nil) == alphabet.contains(UInt8(value)), "byte \(value) at \(place)")
            }
        }
    }
}

struct CursorTests {
    @Test func parsesAndPrintsEpochDashRev() {
        #expect(Cursor("7-42") == Cursor(epoch: 7, rev: 42))
        #expect(Cursor(epoch: 7, rev: 42).description == "7-42")
        #expect(Cursor(epoch: 7, rev: 42).entityTag == "\"7-42\"")
    }

    @Test func writesItsEntityTagAsBytesTheSameAsTheString() {
        for cursor in [Cursor(epoch: 0, rev: 0), Cursor(epoch: 7, rev: 42), Cursor(epoch: .max, rev: .max)] {
            var bytes: [UInt8] = Array("x".utf8)
            cursor.appendEntityTag(to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == "x" + cursor.entityTag)
        }
    }

    @Test func writesItsEntityTagInPlaceTheSameAsTheString() {
        for cursor in [Cursor(epoch: 0, rev: 0), Cursor(epoch: 7, rev: 42), Cursor(epoch: .max, rev: .max)] {
            let bytes = [UInt8](unsafeUninitializedCapacity: Cursor.entityTagCapacity) { buffer, count in
                count = cursor.writeEntityTag(to: buffer.baseAddress!)
            }
            #expect(String(decoding: bytes, as: UTF8.self) == cursor.entityTag)
        }
        #expect(Cursor(epoch: .max, rev: .max).entityTag.utf8.count == Cursor.entityTagCapacity)
    }

    @Test func refusesGarbage() {
        for text in ["", "7", "7-", "-1", "a-1", "1-b", "01-1", "1-2-3", "18446744073709551616-0", " 1-1", "1-+1"] {
            #expect(Cursor(text) == nil, "\(text)")
        }
    }

    @Test func matchesEntityTagLists() {
        let cursor = Cursor(epoch: 1, rev: 5)
        #expect(cursor.matches(entityTags: "\"1-5\""))
        #expect(cursor.matches(entityTags: "W/\"1-5\""))
        #expect(cursor.matches(entityTags: "\"0-0\", \"1-5\""))
        #expect(cursor.matches(entityTags: "*"))
        #expect(!cursor.matches(entityTags: "\"1-4\""))
        #expect(!cursor.matches(entityTags: "1-5"))
    }
}

struct CORSPolicyTests {
    @Test func noOriginsAllowedByDefaultAndNoHeadersSent() {
        let policy = CORSPolicy()
        #expect(policy.responseHeaders(origin: "https://evil.example").isEmpty)
        #expect(policy.preflight(origin: "https://evil.example", method: "POST", headers: nil) != .allowed([]))
    }

    @Test func allowedOriginIsEchoedWithVaryAndNeverStar() {
        let policy = CORSPolicy(allowedOrigins: ["https://app.example"])
        let headers = policy.responseHeaders(origin: "https://app.example")
        #expect(headers.contains { $0 == ("Access-Control-Allow-Origin", "https://app.example") })
        #expect(headers.contains { $0 == ("Vary", "Origin") })
        #expect(!headers.contains { $0.1 == "*" })
        let other = policy.responseHeaders(origin: "https://other.example")
        #expect(other.count == 1 && other[0] == ("Vary", "Origin"))
    }

    @Test func preflightChecksMethodAndHeaders() {
        let policy = CORSPolicy(allowedOrigins: ["https://app.example"])
        guard
            case .allowed(let headers) = policy.preflight(
                origin: "https://app.example",
                method: "POST",
                headers: "Content-Type, Idempotency-Key"
            )
        else {
            Issue.record("preflight allowed")
            return
        }
        #expect(headers.contains(.init(name: "Access-Control-Allow-Headers", value: "content-type, idempotency-key")))
        guard case .refused(let reason) = policy.preflight(origin: "https://app.example", method: "PATCH", headers: nil)
        else {
            Issue.record("PATCH refused")
            return
        }
        #expect(reason.contains("PATCH"))
        guard
            case .refused = policy.preflight(origin: "https://app.example", method: "POST", headers: "X-Secret")
        else {
            Issue.record("unknown header refused")
            return
        }
    }
}
