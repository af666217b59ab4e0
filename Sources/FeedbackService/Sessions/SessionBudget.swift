import Metrics
import Synchronization

/// The memory all sessions hold together, against `sessions.max.bytes`, and the largest state one session may hold,
/// `session.state.max.bytes`: one per service, shared by every session's ``SessionAccount``.
///
/// What a session holds is counted, not guessed from the process's size: a fixed overhead per session (its loop,
/// locks, ledger, recorder and table entry, measured: ``sessionOverheadBytes``), twice its encoded state (the
/// encoding the service caches, and the decoded state the loop holds, which is about as large), and the states its
/// idempotency ledger keeps. A create or a client event that would pass the budget is refused (507) before anything
/// changes; what is already applied (a restored session, an effect's event) is always counted, even past the budget.
///
/// Thread-safe: the total is one atomic; `admit` adds by compare-and-exchange, so two requests never both take the
/// last bytes. The gauge `feedbackhost_sessions_bytes` follows every change.
final class SessionBudget: Sendable {
    /// What one session costs beside its state, in bytes: an empty `counter` session's share of the process's
    /// resident memory, measured over 20,000 of them without a journal (docs/API.md, "Memory").
    static let sessionOverheadBytes = 4096
    /// How many bytes a state counts per byte of its encoding: the cached encoding, and the loop's decoded state.
    static let stateFactor = 2

    /// The budget, in bytes (`sessions.max.bytes`).
    let limit: Int
    /// The largest encoded state, in bytes (`session.state.max.bytes`).
    let stateLimit: Int
    private let total = Atomic<Int>(0)
    private let gauge: Meter?

    init(limit: Int, stateLimit: Int, gauge: Meter? = nil) {
        self.limit = limit
        self.stateLimit = stateLimit
        self.gauge = gauge
    }

    /// The bytes every session holds now.
    var bytes: Int { total.load(ordering: .relaxed) }

    /// What a state of `encodedBytes` counts.
    static func held(state encodedBytes: Int) -> Int { stateFactor * encodedBytes }

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
        let what =
            creating
            ? "the starting state encodes to \(encodedBytes) bytes"
            : "these events would make the session's state \(encodedBytes) bytes"
        return APIError(
            .stateTooLarge,
            "\(what), past the limit of \(stateLimit) bytes per state (session.state.max.bytes); nothing was "
                + "applied: send events that keep the state smaller, or ask the operator to raise the limit"
        )
    }
}
