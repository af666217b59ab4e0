import FeedbackJSON
import FeedbackService
import Foundation
import SystemKit
import Testing
import Upstream

/// What a stream carries, on the service built in-process with the test-only `notes` system (whose state holds
/// client strings): framing, patches, selections.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct StreamContentTests {
    private static func state(_ data: String) throws -> JSONValue {
        guard case .object(let members) = try JSONValue(parsing: Array(data.utf8)), let state = members["state"] else {
            throw SSEReader.Timeout(what: "a snapshot with a state")
        }
        return state
    }

    @Test func clientStringsWithLineBreaksNeverForgeAField() async throws {
        let server = try InProcessServer.start()
        let id = try await server.api.create("notes")
        let reader = try server.reader("/v1/sessions/\(id)/stream")
        _ = try await reader.nextEvent()
        let hostile = "a\rb\nc\r\nd\nevent: x\ndata: forged\n\nid: 1-1\r\r\n: comment\nretry: 1"
        let escaped = String(decoding: JSONValue.string(hostile).serialized(), as: UTF8.self)
        try await server.api.post(id, #"{"type":"set","text":\#(escaped)}"#)
        try await server.api.post(id, #"{"type":"append","item":\#(escaped)}"#)
        for rev in 1...2 {
            let event = try await reader.nextEvent()
            #expect(event.type == "snapshot")
            #expect(event.id.hasSuffix("-\(rev)"))
            let state = try Self.state(event.data)
            #expect(
                state
                    == JSONValue.object([
                        "text": .string(hostile), "items": .array(rev == 2 ? [.string(hostile)] : []),
                        "padding": .string(""),
                    ])
            )
        }
        // The next item is the delete's end: nothing forged slipped in between.
        #expect(try await server.api.send("DELETE", "/v1/sessions/\(id)").status == 204)
        guard case .event(let type, let data, _) = try await reader.next() else {
            Issue.record("the stream did not end with an event")
            return await server.stop()
        }
        #expect(type == "ended")
        #expect(data == #"{"reason":"deleted"}"#)
        #expect(try await reader.next() == .closed)
        await server.stop()
    }

    @Test func patchModeReproducesEverySnapshotWhenApplied() async throws {
        let server = try InProcessServer.start()
        let id = try await server.api.create("notes")
        let snapshots = try server.reader("/v1/sessions/\(id)/stream")
        let patches = try server.reader("/v1/sessions/\(id)/stream?mode=patch")
        let first = try await patches.nextEvent()
        #expect(first.type == "snapshot")
        var document = try Self.state(first.data)
        #expect(try Self.state(try await snapshots.nextEvent().data) == document)
        let events = [
            #"{"type":"append","item":"a"}"#, #"{"type":"append","item":"b/~c"}"#, #"{"type":"set","text":"x\ny"}"#,
            #"{"type":"removeLast"}"#, #"{"type":"pad","bytes":12}"#, #"{"type":"append","item":"d"}"#,
            #"{"type":"removeLast"}"#, #"{"type":"removeLast"}"#, #"{"type":"set","text":""}"#,
        ]
        var rev = 0
        for event in events {
            try await server.api.post(id, event)
            rev += 1
            let patch = try await patches.nextEvent()
            #expect(patch.type == "patch")
            let data = try JSONValue(parsing: Array(patch.data.utf8))
            guard case .object(let members) = data, let ops = members["ops"] else {
                Issue.record("a patch without ops: \(patch.data)")
                break
            }
            #expect(members["base"] == .int(Int64(rev - 1)))
            #expect(members["rev"] == .int(Int64(rev)))
            document = try JSONPatch(json: ops).apply(to: document)
            #expect(document == (try Self.state(try await snapshots.nextEvent().data)), "after \(event)")
        }
        await server.stop()
    }

    /// A fan-out handed to the shards a part at a time (`--stream-write-part 2`; five subscribers of two views, the
    /// whole state and a selection, so consecutive subscribers get different frames): every subscriber still gets
    /// every state once, in order.
    @Test func aFanOutHandedOutInPartsReachesEverySubscriberOnceInOrder() async throws {
        let server = try InProcessServer.start(["--stream-write-part", "2"])
        let id = try await server.api.create("notes")
        var readers: [SSEReader] = []
        for index in 0..<5 {
            let select = index % 2 == 0 ? "" : "?select=/text"
            readers.append(try server.reader("/v1/sessions/\(id)/stream\(select)"))
        }
        for reader in readers { #expect(Self.revision(try await reader.nextEvent().data) == 0) }
        for (revision, text) in ["part-one", "part-two", "part-three"].enumerated() {
            try await server.api.post(id, #"{"type":"set","text":"\#(text)"}"#)
            for (index, reader) in readers.enumerated() {
                let event = try await reader.nextEvent()
                #expect(Self.revision(event.data) == revision + 1, "subscriber \(index)")
                #expect(event.data.contains(#""\#(text)""#), "subscriber \(index)")
            }
        }
        await server.stop()
    }

    private static func revision(_ data: String) -> Int? {
        (try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any])?["rev"] as? Int
    }

    @Test func selectStreamsOnlyTheChosenPartsAndOnlyWhenTheyChange() async throws {
        let server = try InProcessServer.start()
        let id = try await server.api.create("notes")
        let reader = try server.reader("/v1/sessions/\(id)/stream?select=/text&select=/items/0")
        let patches = try server.reader("/v1/sessions/\(id)/stream?mode=patch&select=/text")
        let first = try await reader.nextEvent()
        // A snapshot event carries the system's schema hash (issue 34).
        let schema = #","schema":"\#(NotesSystem().schemaHash)""#
        #expect(first.data == #"{"rev":0,"select":{"/items/0":null,"/text":""}"# + schema + "}")
        #expect(try await patches.nextEvent().data == #"{"rev":0,"select":{"/text":""}"# + schema + "}")
        try await server.api.post(id, #"{"type":"pad","bytes":3}"#)
        try await server.api.post(id, #"{"type":"set","text":"hi"}"#)
        let changed = try await reader.nextEvent()
        #expect(changed.data == #"{"rev":2,"select":{"/items/0":null,"/text":"hi"}"# + schema + "}")
        #expect(changed.id.hasSuffix("-2"))
        let patch = try await patches.nextEvent()
        #expect(patch.data == #"{"base":0,"rev":2,"ops":[{"op":"replace","path":"/~1text","value":"hi"}]}"#)
        try await server.api.post(id, #"{"type":"append","item":"first"}"#)
        #expect(
            try await reader.nextEvent().data == #"{"rev":3,"select":{"/items/0":"first","/text":"hi"}"# + schema + "}"
        )
        try await server.api.post(id, #"{"type":"set","text":"bye"}"#)
        #expect(try await patches.nextEvent().data.hasPrefix(#"{"base":2,"rev":4,"#))
        let bad = try await server.api.send("GET", "/v1/sessions/\(id)/stream?select=text")
        #expect(bad.status == 400)
        #expect(try await server.api.send("GET", "/v1/sessions/\(id)/stream?mode=diff").status == 400)
        await server.stop()
    }
}
