import SessionRuntime
import Testing

/// A post's answer body, written in place: the same bytes as spelled out here, for numbers of every length and with
/// and without the clients' sequences; with an id and system or a schema, the labelled writer's.
@Suite struct SessionSnapshotBodyTests {
    @Test(arguments: [(UInt64(0), UInt64(0)), (1, 9), (3_214_565_611, 10), (99, 100), (.max, .max), (12, 1 << 40)])
    func aPostsAnswerIsItsRevisionCursorAndState(epoch: UInt64, rev: UInt64) {
        let state = Array(#"{"count":1,"name":"é"}"#.utf8)
        let plain = SessionSnapshot(cursor: Cursor(epoch: epoch, rev: rev), state: state)
        #expect(
            String(decoding: plain.body(), as: UTF8.self)
                == #"{"rev":\#(rev),"cursor":"\#(epoch)-\#(rev)","state":{"count":1,"name":"é"}}"#
        )
        let clients = plain.with(clients: Array(#"{"app":7}"#.utf8))
        #expect(
            String(decoding: clients.body(), as: UTF8.self)
                == #"{"rev":\#(rev),"cursor":"\#(epoch)-\#(rev)","state":{"count":1,"name":"é"},"clients":{"app":7}}"#
        )
        let empty = SessionSnapshot(cursor: Cursor(epoch: epoch, rev: rev), state: [])
        #expect(
            String(decoding: empty.body(), as: UTF8.self) == #"{"rev":\#(rev),"cursor":"\#(epoch)-\#(rev)","state":}"#
        )
    }

    @Test func anAnswerWithItsSessionIsLabelled() throws {
        let id = try #require(SessionID("AAAAAAAAAAAAAAAAAAAAAA"))
        let snapshot = SessionSnapshot(cursor: Cursor(epoch: 5, rev: 6), state: Array("{}".utf8))
        #expect(
            String(decoding: snapshot.body(id: id, system: "counter", schema: "ab"), as: UTF8.self)
                == #"{"id":"AAAAAAAAAAAAAAAAAAAAAA","system":"counter","rev":6,"cursor":"5-6","state":{},"schema":"ab"}"#
        )
        #expect(
            String(decoding: snapshot.body(schema: "ab"), as: UTF8.self)
                == #"{"rev":6,"cursor":"5-6","state":{},"schema":"ab"}"#
        )
    }
}
