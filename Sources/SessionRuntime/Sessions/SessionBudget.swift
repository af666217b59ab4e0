package import Metrics
import Synchronization

/// The memory all sessions hold together, against `sessions.max.bytes`, and the largest state one session may hold,
/// `session.state.max.bytes`: one per service, shared by every session's ``SessionAccount``.
///
/// What a session holds is counted from what it really keeps, not from the process's size: a fixed overhead per
/// session (its loop, locks, ledger, recorder and table entry: ``sessionOverheadBytes``, measured), its state, and
/// the states its idempotency ledger keeps. A state is weighed from its encoding (``weigh(_:)``): the encoding the
/// service caches, plus the decoded state the loop holds, which is as large for strings and several times larger
/// for many small values (measured, docs/API.md "Memory"). A create or a client event that would pass the budget is
/// refused (507) before anything changes; what is already applied (a restored session, an effect's event) is always
/// counted, even past the budget.
///
/// Thread-safe: the total is one atomic; `admit` adds by compare-and-exchange, so two requests never both take the
/// last bytes. The gauge `feedbackhost_sessions_bytes` follows every change.
@usableFromInline
package final class SessionBudget: Sendable {
    /// What one session costs beside its state, in bytes: an empty `counter` session's share of the process's
    /// resident memory, 1.3 KB without a journal and 2.0 KB with one (10,000 sessions, debug build, Linux).
    package static let sessionOverheadBytes = 2048

    /// What a state weighs: its encoded size (what the per-state limit is about) and the bytes it is counted at.
    @usableFromInline
    package struct Weight: Sendable, Equatable {
        /// The encoded state's size.
        package var encoded: Int
        /// What the session holds for it: the cached encoding and the decoded state.
        package var held: Int

        package init(encoded: Int, held: Int) {
            self.encoded = encoded
            self.held = held
        }

        package static let zero = Weight(encoded: 0, held: 0)
    }

    /// Weighs a state from its compact JSON in one pass: twice its size (the cached encoding, and the decoded
    /// state's own bytes), plus 96 bytes per object member (a dictionary slot, its key and value) and 24 per other
    /// array element or member (a value's slot), counted by `:` and `,` (those inside strings too, which overcounts
    /// a little and needs no parse). Measured against resident memory: a state of one long string 119 KB (counted
    /// 116 KB), of 800 four-member objects 468 KB (counted 501 KB), of 9,000 integers 277 KB (counted 324 KB), each
    /// about 57 KB encoded.
    @usableFromInline
    package static func weigh(_ encoded: [UInt8]) -> Weight {
        var members = 0
        var elements = 0
        encoded.withUnsafeBufferPointer { bytes in
            for byte in bytes {
                if byte == UInt8(ascii: ":") {
                    members &+= 1
                } else if byte == UInt8(ascii: ",") {
                    elements &+= 1
                }
            }
        }
        return Weight(encoded: encoded.count, held: 2 * encoded.count + 96 * members + 24 * elements)
    }

    /// The budget, in bytes (`sessions.max.bytes`).
    package let limit: Int
    /// The largest encoded state, in bytes (`session.state.max.bytes`).
    @usableFromInline
    let stateLimit: Int
    private let total = Atomic<Int>(0)
    private let gauge: Meter?

    package init(limit: Int, stateLimit: Int, gauge: Meter? = nil) {
        self.limit = limit
        self.stateLimit = stateLimit
        self.gauge = gauge
    }

    /// The bytes every session holds now.
    package var bytes: Int { total.load(ordering: .relaxed) }

    /// Takes `bytes` more if they fit in the budget; false (and nothing taken) when they do not.
    func admit(_ bytes: Int) -> Bool {
        guard bytes > 0 else {
            force(bytes)
            return true
        }
        var current = total.load(ordering: .relaxed)
        while true {
            guard current + bytes <= limit else { return false }
            let (exchanged, original) = total.compareExchange(
                expected: current,
                desired: current + bytes,
                ordering: .relaxed
            )
            if exchanged { break }
            current = original
        }
        gauge?.increment(by: Double(bytes))
        return true
    }

    /// Adds `delta` (negative: gives bytes back) whatever the budget says: for what is already applied.
    func force(_ delta: Int) {
        guard delta != 0 else { return }
        total.add(delta, ordering: .relaxed)
        gauge?.increment(by: Double(delta))
    }

    /// The refusal of a request that needs `needed` more bytes than the budget has left.
    func full(needing needed: Int) -> APIError {
        APIError(
            .sessionsMemoryFull,
            "the sessions of this server hold \(bytes) of the \(limit) bytes they may hold together "
                + "(sessions.max.bytes) and this request needs \(needed) more; delete sessions you no longer need "
                + "(DELETE /v1/sessions/{id}) and retry, or ask the operator to raise sessions.max.bytes",
            retryAfter: 5
        )
    }

    /// The refusal of a state that would encode to `encodedBytes`, past the per-state limit. `creating` says
    /// whether it is a starting state or what client events would make of the session's state.
    func stateTooLarge(_ encodedBytes: Int, creating: Bool) -> APIError {
        let (what, fix) =
            creating
            ? ("the starting state encodes to \(encodedBytes) bytes", "start from a smaller state")
            : ("these events would make the session's state \(encodedBytes) bytes", "send events that keep it smaller")
        return APIError(
            .stateTooLarge,
            "\(what), past the limit of \(stateLimit) bytes per state (session.state.max.bytes); nothing was "
                + "applied: \(fix), or ask the operator to raise the limit"
        )
    }
}
