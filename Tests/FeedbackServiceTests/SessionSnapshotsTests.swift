import Logging
import Synchronization
import Testing

@testable import SessionRuntime

/// The session's encoded states (`SessionSnapshots`): each step's state encoded once for its readers, and a numbered
/// post marked late still named by its revision's cached snapshot.
@Suite struct SessionSnapshotsTests {
    private func snapshots() -> SessionSnapshots {
        SessionSnapshots(epoch: 1, latest: nil, ledger: ClientLedger(), account: nil, logger: Logger(label: "test"))
    }

    @Test func anEarlierStepOfABatchIsEncodedOnceForItsTwoReadersThenForgotten() {
        let snapshots = snapshots()
        let encodings = Atomic<Int>(0)
        func encoding(_ text: String) -> () -> [UInt8] {
            {
                encodings.add(1, ordering: .relaxed)
                return Array(text.utf8)
            }
        }
        // A post's trial cached its batch's last state (revision 3) before the steps were observed.
        _ = snapshots.cache(SessionSnapshot(cursor: Cursor(epoch: 1, rev: 3), state: Array("3".utf8)))
        // Revision 2: the recorder encodes it, the stream's observer right after finds it.
        #expect(snapshots.snapshot(at: 2, encoding: encoding("2")).state == Array("2".utf8))
        #expect(snapshots.snapshot(at: 2, encoding: encoding("2")).state == Array("2".utf8))
        #expect(encodings.load(ordering: .relaxed) == 1)
        // Revision 3 is the latest: no encoding, and the earlier step is forgotten.
        #expect(snapshots.snapshot(at: 3, encoding: encoding("3")).state == Array("3".utf8))
        #expect(encodings.load(ordering: .relaxed) == 1)
        #expect(snapshots.cached.withLock { $0.older == nil })
        // A step newer than the latest (an effect's) becomes the latest.
        #expect(snapshots.snapshot(at: 4, encoding: encoding("4")).state == Array("4".utf8))
        #expect(snapshots.snapshot(at: 4, encoding: encoding("4")).state == Array("4".utf8))
        #expect(encodings.load(ordering: .relaxed) == 2)
        #expect(snapshots.cached.withLock { $0.latest?.rev } == 4)
    }

    @Test func aLateMarkReachesTheCachedSnapshotOfItsRevision() {
        let snapshots = snapshots()
        // The recorder's observer cached revision 5 before the post queued behind others was marked.
        _ = snapshots.snapshot(at: 5) { Array("5".utf8) }
        #expect(snapshots.snapshot(at: 5) { Array("5".utf8) }.clients == nil)
        let marks = Array(#"{"c1":7}"#.utf8)
        snapshots.remark(5, clients: marks)
        let marked = snapshots.snapshot(at: 5) {
            Issue.record("encoded again")
            return []
        }
        #expect(marked.clients == marks)
        // A revision the cache does not hold is left alone: revision 5 keeps its own marks.
        snapshots.remark(6, clients: Array(#"{"c2":1}"#.utf8))
        #expect(snapshots.cached.withLock { $0.latest?.clients } == marks)
    }
}
