import FeedbackLoop
import FeedbackService
import SystemKit

// The example of docs/SYSTEMS.md, compiled and tested here so the guide stays true.

/// Fires a text after some seconds: the pending reminder is in the state with its absolute deadline (a durable
/// timer), and a timer feedback fires it when the deadline comes, across restarts.
struct ReminderSystem: FeedbackSystem {
    @FeedbackSchema
    struct State: Codable, Equatable, Sendable {
        var pending: Reminder?
        var fired: [String] = []
    }

    @FeedbackSchema
    struct Reminder: Codable, Equatable, Sendable {
        var text: String
        var seconds: Int
        /// When it fires: set by the `schedule` event right after the reminder is posted.
        var due: WallTime?
    }

    @FeedbackEvent
    enum Event: Sendable {
        case remind(text: String, seconds: Int)  // posted by clients: {"type":"remind","text":"tea","seconds":3}
        @Effect case schedule(due: WallTime)  // sent by the scheduling feedback; clients may not post it
        @Effect case fire  // sent by the timer feedback; clients may not post it
    }

    var name: String { "reminder" }
    var summary: String { "Fires a text after some seconds." }
    var exampleEvents: [Event] { [.remind(text: "tea", seconds: 3)] }
    var initialState: State { State() }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .remind(let text, let seconds):
            state.pending = Reminder(text: text, seconds: seconds)
        case .schedule(let due):
            if state.pending?.due == nil { state.pending?.due = due }
        case .fire:
            if let text = state.pending?.text { state.fired.append(text) }
            state.pending = nil
        }
    }

    /// The pending reminder's deadline: the server wakes the session for it even when it left memory.
    func nextDeadline(of state: State) -> WallTime? { state.pending?.due }

    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
        let wallClock = environment.wallClock
        return [
            // A reminder without a deadline gets one: now plus its delay, kept in the state.
            .react(
                request: { $0.pending?.due == nil ? $0.pending : nil },
                effect: { reminder in .schedule(due: wallClock.now() + .seconds(reminder.seconds)) }
            ),
            // The deadline is waited for; a new reminder (another deadline) cancels the old wait.
            .react(
                request: { $0.pending?.due },
                effect: { due in
                    try await wallClock.sleep(until: due)
                    return .fire
                }
            ),
        ]
    }
}
