import FeedbackLoop

/// The benchmark system: a counter with two request fields that the events never change, so both feedbacks
/// stay idle on their current request.
struct BenchState: Sendable, Equatable {
    var count = 0
    var download: Int?
    var upload: Int?
}

enum BenchEvent: Sendable {
    case increment
    case loaded(Int)
}

@inline(__always)
func reduceBench(_ state: inout BenchState, _ event: BenchEvent) {
    switch event {
    case .increment: state.count &+= 1
    case .loaded(let value): state.count &+= value
    }
}

/// The system's feedbacks: descriptions built once and shared by every loop, as a service does.
let benchFeedbacks: [Feedback<BenchState, BenchEvent>] = [
    .react(request: { $0.download }, effect: { .loaded($0) }),
    .react(request: { $0.upload }, effect: { .loaded($0) }),
]

/// The loop under test: two `react(request:)` feedbacks, built in this module (the service's position).
func makeFeedbackLoop() -> Loop<BenchState, BenchEvent> {
    Loop(initial: BenchState(), reduce: reduceBench, feedbacks: benchFeedbacks)
}
