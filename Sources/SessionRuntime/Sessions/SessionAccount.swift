import Synchronization

/// What one session holds against the service's ``SessionBudget``: the fixed overhead, its state (counted from the
/// size of its latest encoding) and the states its idempotency ledger keeps. Closed once, when the session stops,
/// which gives everything back.
///
/// Thread-safe: the counts are under one `Mutex`, and every change of the budget's total is made under it, so the
/// total always equals the sum of the open accounts.
@usableFromInline
package final class SessionAccount: Sendable {
    private struct Held {
        /// The state's weight, from its latest encoding.
        var state: SessionBudget.Weight
        /// The bytes of the answers the idempotency ledger keeps.
        var answers = 0
        var closed = false

        var total: Int { SessionBudget.sessionOverheadBytes + state.held + answers }
    }

    @usableFromInline
    let budget: SessionBudget
    private let held: Mutex<Held>

    private init(budget: SessionBudget, state: SessionBudget.Weight) {
        self.budget = budget
        held = Mutex(Held(state: state))
    }

    /// Opens the account of a new session whose starting state weighs `state`; throws the problem to answer when
    /// the state is past the per-state limit or the budget has no room for the session.
    package static func open(in budget: SessionBudget, state: SessionBudget.Weight) throws(APIError) -> SessionAccount {
        guard state.encoded <= budget.stateLimit else { throw budget.stateTooLarge(state.encoded, creating: true) }
        let account = SessionAccount(budget: budget, state: state)
        let needed = account.bytes
        guard budget.admit(needed) else { throw budget.full(needing: needed) }
        return account
    }

    /// Opens the account of a session restored from the journal: counted whatever the budget says, since it was
    /// acknowledged before.
    package static func restored(in budget: SessionBudget, state: SessionBudget.Weight) -> SessionAccount {
        let account = SessionAccount(budget: budget, state: state)
        budget.force(account.bytes)
        return account
    }

    /// Everything the session counts now, in bytes.
    package var bytes: Int { held.withLock { $0.total } }

    /// Takes the bytes for the session's state to weigh `state` (what client events would make of it) and returns
    /// the weight it had, or returns the problem to answer, with nothing taken: the state would pass the per-state
    /// limit, or it grows and the budget has no room for the growth. A state that does not grow is admitted
    /// whenever it is within the limit.
    @usableFromInline
    package func admitState(_ state: SessionBudget.Weight) -> Result<SessionBudget.Weight, APIError> {
        held.withLock { held -> Result<SessionBudget.Weight, APIError> in
            let previous = held.state
            guard !held.closed else { return .success(previous) }
            if state.encoded > budget.stateLimit {
                return .failure(budget.stateTooLarge(state.encoded, creating: false))
            }
            let growth = state.held - previous.held
            guard budget.admit(growth) else { return .failure(budget.full(needing: growth)) }
            held.state = state
            return .success(previous)
        }
    }

    /// Undoes an `admitState` whose events were not queued after all, unless the state was counted anew meanwhile.
    @usableFromInline
    package func revertState(from state: SessionBudget.Weight, to previous: SessionBudget.Weight) {
        held.withLock { held in
            guard !held.closed, held.state == state else { return }
            budget.force(previous.held - state.held)
            held.state = previous
        }
    }

    /// Counts the state at the weight of its latest encoding, whatever the budget says: it is applied already.
    /// Returns true when the state is now past the per-state limit and was not before (an effect's events grew it).
    @discardableResult
    @usableFromInline
    package func settleState(_ state: SessionBudget.Weight) -> Bool {
        held.withLock { held -> Bool in
            guard !held.closed, held.state != state else { return false }
            let crossed = state.encoded > budget.stateLimit && held.state.encoded <= budget.stateLimit
            budget.force(state.held - held.state.held)
            held.state = state
            return crossed
        }
    }

    /// Counts the idempotency ledger's answers at `bytes`.
    package func settleAnswers(_ bytes: Int) {
        held.withLock { held in
            guard !held.closed, held.answers != bytes else { return }
            budget.force(bytes - held.answers)
            held.answers = bytes
        }
    }

    /// Gives everything back; later calls do nothing.
    package func close() {
        held.withLock { held in
            guard !held.closed else { return }
            held.closed = true
            budget.force(-held.total)
        }
    }
}
