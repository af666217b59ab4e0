import FeedbackLoop

// Until the service exists (sessions, REST and SSE API), `make run` shows the FeedbackLoop core at work:
// Play Catch from the seeds on the real clock, with every (event, state) step printed as it happens.

enum Catch: Sendable, Equatable {
    case humanHasIt
    case machineHasIt
}

enum CatchEvent: Sendable {
    case throwToMachine
    case throwToHuman
}

let clock = ContinuousClock()
let throwDelay = Duration.milliseconds(500)
let rounds = 3

let loop = Loop<Catch, CatchEvent>(
    initial: .humanHasIt,
    reduce: { state, event in
        switch event {
        case .throwToMachine: state = .machineHasIt
        case .throwToHuman: state = .humanHasIt
        }
    },
    feedbacks: [
        // The machine throws back after a delay: the effect is encoded in the state (`machineHasIt`).
        .react(
            request: { $0 == .machineHasIt ? true : nil },
            effect: { _ in
                try await clock.sleep(for: throwDelay)
                return .throwToHuman
            }
        )
    ]
)
let logging = loop.logSteps { print($0) }

print("feedback-host: the HTTP service is not built yet; running a demo of the FeedbackLoop core (Play Catch)")
for round in 1...rounds {
    print("round \(round): the human throws")
    loop.send(.throwToMachine)
    for await state in loop.states where state == .humanHasIt {
        break
    }
}
logging.cancel()
loop.stop()
print("done after \(loop.revision) steps")
