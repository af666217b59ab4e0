/// What one stream's client has and what it gets next: a value-type state machine. The hub tells it the latest
/// revision of its view and whether its stream takes a frame now; it answers with what to write, and the hub
/// writes it. No I/O and no clock, so tests drive it directly.
///
/// Constant size whatever the client's speed: a client that cannot take a frame is only marked `behind`, and
/// later gets the latest value (one snapshot, or one patch from what it has).
package struct SubscriberState: Sendable {
    /// What the hub does for the subscriber.
    package enum Action: Equatable, Sendable {
        /// It has the latest value, there is none yet, or it ended: nothing to write.
        case nothing
        /// It cannot take a frame now: it is marked behind and gets the latest later. `newValue` is false when it
        /// was already held back for this same value (a re-check), so a conflation is counted once per value.
        case holdBack(newValue: Bool)
        /// Write the view's snapshot.
        case snapshot
        /// Write the view's patch from this revision (the client's).
        case patch(from: UInt64)
    }

    let mode: StreamRequest.Mode
    /// The view revision the client has; nil before its first frame (or after an unknown cursor).
    package private(set) var sentRev: UInt64?
    /// The cursor the client resumes from, until the first value decides what it gets.
    package private(set) var resumeFrom: String?
    /// Held back since its last frame: it waits for the latest value.
    package private(set) var behind = false
    /// The value it was last held back for, while behind.
    private var heldFor: UInt64?
    /// Ended by the hub or gone; nothing more is written.
    package private(set) var closed = false

    package init(mode: StreamRequest.Mode, resumeFrom: String?) {
        self.mode = mode
        self.resumeFrom = resumeFrom
    }

    /// Decides what brings the client to `latest`, its view's latest revision (nil before the first state).
    /// A pending cursor is placed first (`resumed` says how, once); then a client that has the latest gets nothing,
    /// one whose stream is not `ready` is held back, and the others get a patch when they asked for patches and
    /// `canPatch` from their revision, else a snapshot, after which they count as having `latest`.
    package mutating func next(
        latest: UInt64?,
        epoch: UInt64,
        ready: () -> Bool,
        canPatch: (UInt64) -> Bool
    ) -> (action: Action, resumed: ResumeOutcome?) {
        guard !closed, let latest else { return (.nothing, nil) }
        var resumed: ResumeOutcome?
        if let cursor = resumeFrom {
            resumeFrom = nil
            let decision = ResumeOutcome.decide(
                lastEventID: cursor,
                epoch: epoch,
                latest: latest,
                mode: mode,
                canPatch: canPatch
            )
            resumed = decision.outcome
            sentRev = decision.base
        }
        guard sentRev != latest else {
            behind = false
            heldFor = nil
            return (.nothing, resumed)
        }
        guard ready() else {
            behind = true
            defer { heldFor = latest }
            return (.holdBack(newValue: heldFor != latest), resumed)
        }
        behind = false
        heldFor = nil
        let action: Action
        if mode == .patch, let base = sentRev, canPatch(base) {
            action = .patch(from: base)
        } else {
            action = .snapshot
        }
        sentRev = latest
        return (action, resumed)
    }

    /// The stream ended: nothing more is decided.
    package mutating func close() {
        closed = true
        behind = false
        heldFor = nil
    }
}
