import SessionRuntime
import Testing

/// `ClientLedger`'s bound (`session.clients.max`): a new client past it makes the ledger forget the least recently
/// active one, never one with a post in flight; a client it does not know starts at 1, any other number is unknown.
@Suite struct ClientLedgerTests {
    private static func stamp(_ client: String, _ sequence: UInt64) -> ClientStamp {
        ClientStamp(client: client, sequence: sequence)
    }

    private static func apply(_ ledger: inout ClientLedger, _ client: String, _ sequence: UInt64, rev: UInt64) {
        #expect(ledger.begin(stamp(client, sequence), remembering: 2) == .proceed)
        ledger.mark(stamp(client, sequence), at: rev)
        ledger.complete(
            stamp(client, sequence),
            .applied(SessionSnapshot(cursor: Cursor(epoch: 1, rev: rev), state: []))
        )
    }

    @Test func aNewClientPastTheBoundForgetsTheLeastRecentlyActiveOne() {
        var ledger = ClientLedger()
        Self.apply(&ledger, "a", 1, rev: 1)
        Self.apply(&ledger, "b", 1, rev: 2)
        Self.apply(&ledger, "a", 2, rev: 3)
        #expect(ledger.takeForgotten() == [])
        Self.apply(&ledger, "c", 1, rev: 4)
        #expect(ledger.takeForgotten() == ["b"])
        #expect(ledger.count == 2)
        #expect(ledger.marks(at: 4).map { String(decoding: $0, as: UTF8.self) } == #"{"a":2,"c":1}"#)
        #expect(ledger.begin(Self.stamp("b", 2), remembering: 2) == .unknown)
        #expect(ledger.begin(Self.stamp("a", 9), remembering: 2) == .gap(expected: 3))
    }

    @Test func aClientWithAPostInFlightIsNeverForgotten() {
        var ledger = ClientLedger()
        #expect(ledger.begin(Self.stamp("slow", 1), remembering: 2) == .proceed)
        Self.apply(&ledger, "b", 1, rev: 1)
        Self.apply(&ledger, "c", 1, rev: 2)
        // "slow" began first, but its post is still being applied: "b" goes.
        #expect(ledger.takeForgotten() == ["b"])
        #expect(ledger.begin(Self.stamp("slow", 1), remembering: 2) == .inFlight)
        // Only clients with posts in flight: the ledger holds one more than the bound until one is answered.
        var busy = ClientLedger()
        #expect(busy.begin(Self.stamp("x", 1), remembering: 1) == .proceed)
        #expect(busy.begin(Self.stamp("y", 1), remembering: 1) == .proceed)
        #expect(busy.takeForgotten() == [])
        #expect(busy.count == 2)
    }

    @Test func aRestoredLedgerForgetsByRevisionWhenTheBoundWasLowered() {
        var ledger = ClientLedger()
        let records = [("old", 1), ("new", 9), ("mid", 5)].map { client, revision in
            ClientLedger.record(
                Self.stamp(client, 1),
                .applied(SessionSnapshot(cursor: Cursor(epoch: 1, rev: UInt64(revision)), state: Array("{}".utf8))),
                session: "s",
                epoch: 1,
                revision: UInt64(revision)
            )
        }
        ledger.restore(records, revision: 9)
        #expect(ledger.begin(Self.stamp("fresh", 1), remembering: 2) == .proceed)
        #expect(ledger.takeForgotten() == ["old", "mid"])
        #expect(ledger.begin(Self.stamp("new", 1), remembering: 2) != .unknown)
    }
}
