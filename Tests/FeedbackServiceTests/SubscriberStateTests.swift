import Testing

@testable import FeedbackService

/// The decisions of one subscriber's state machine, without sockets: what it gets, when it is held back, how a
/// cursor is placed.
@Suite struct SubscriberStateTests {
    private let epoch: UInt64 = 7
    private let patchable: (UInt64) -> Bool = { $0 >= 2 }

    private func next(
        _ state: inout SubscriberState,
        latest: UInt64?,
        ready: Bool = true
    ) -> (action: SubscriberState.Action, resumed: ResumeOutcome?) {
        state.next(latest: latest, epoch: epoch, ready: { ready }, canPatch: patchable)
    }

    @Test func aNewSubscriberGetsASnapshotThenNothingUntilTheNextValue() {
        var state = SubscriberState(mode: .snapshot, resumeFrom: nil)
        #expect(next(&state, latest: nil).action == .nothing)
        #expect(next(&state, latest: 3).action == .snapshot)
        #expect(state.sentRev == 3)
        #expect(next(&state, latest: 3).action == .nothing)
        #expect(next(&state, latest: 4).action == .snapshot)
    }

    @Test func patchModeGetsAPatchFromWhatItHasWhenOneCanBeMade() {
        var state = SubscriberState(mode: .patch, resumeFrom: nil)
        #expect(next(&state, latest: 1).action == .snapshot)
        // Revision 1 is too old to patch from here: a snapshot instead.
        #expect(next(&state, latest: 2).action == .snapshot)
        #expect(next(&state, latest: 5).action == .patch(from: 2))
        #expect(state.sentRev == 5)
    }

    @Test func aBusyStreamIsHeldBackThenGetsOnlyTheLatest() {
        var state = SubscriberState(mode: .patch, resumeFrom: nil)
        #expect(next(&state, latest: 2).action == .snapshot)
        #expect(next(&state, latest: 3, ready: false).action == .holdBack(newValue: true))
        #expect(state.behind)
        // A re-check for the same value is not another conflation; a newer value is.
        #expect(next(&state, latest: 3, ready: false).action == .holdBack(newValue: false))
        #expect(next(&state, latest: 4, ready: false).action == .holdBack(newValue: true))
        #expect(next(&state, latest: 5).action == .patch(from: 2))
        #expect(!state.behind)
    }

    @Test func aSubscriberThatHasTheLatestIsNeverHeldBack() {
        var state = SubscriberState(mode: .snapshot, resumeFrom: nil)
        _ = next(&state, latest: 3)
        #expect(next(&state, latest: 3, ready: false).action == .nothing)
        #expect(!state.behind)
    }

    @Test func aCursorIsPlacedOnceWithTheFirstValue() {
        var current = SubscriberState(mode: .patch, resumeFrom: "7-4")
        let first = next(&current, latest: 4)
        #expect(first.action == .nothing)
        #expect(first.resumed == .current)
        #expect(next(&current, latest: 5) == (.patch(from: 4), nil))

        var behind = SubscriberState(mode: .patch, resumeFrom: "7-2")
        #expect(next(&behind, latest: 4) == (.patch(from: 2), .patch))

        var snapshotMode = SubscriberState(mode: .snapshot, resumeFrom: "7-2")
        #expect(next(&snapshotMode, latest: 4) == (.snapshot, .snapshot))

        for cursor in ["garbage", "8-2", "7-9"] {
            var unknown = SubscriberState(mode: .patch, resumeFrom: cursor)
            #expect(next(&unknown, latest: 4) == (.snapshot, .unknown))
        }
    }

    @Test func aCursorIsPlacedEvenWhenTheStreamIsBusy() {
        var state = SubscriberState(mode: .patch, resumeFrom: "7-2")
        #expect(next(&state, latest: 4, ready: false) == (.holdBack(newValue: true), .patch))
        #expect(next(&state, latest: 4) == (.patch(from: 2), nil))
    }

    @Test func aClosedSubscriberGetsNothing() {
        var state = SubscriberState(mode: .snapshot, resumeFrom: nil)
        _ = next(&state, latest: 1, ready: false)
        state.close()
        #expect(!state.behind)
        #expect(next(&state, latest: 2).action == .nothing)
    }
}
