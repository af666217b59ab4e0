import FeedbackHostClient
import FeedbackHostTesting
import Observation
import Systems
import Testing

/// `RemoteStore` is `@Observable`: observation tracking sees a send's prediction and a confirmation.
@Suite(.serialized, .timeLimit(.minutes(1)))
@MainActor
struct RemoteStoreObservationTests {
    final class Flag: @unchecked Sendable {
        var changed = false
    }

    @Test func observationSeesThePredictedState() async throws {
        try await withLocalInstance { instance in
            let store = try await instance.checkedHost.createStore(CounterSystem())
            defer { store.close() }
            let flag = Flag()
            withObservationTracking {
                _ = store.state
            } onChange: {
                flag.changed = true
            }
            store.send(.increment)
            #expect(flag.changed)
            let confirmed = Flag()
            withObservationTracking {
                _ = store.confirmed
            } onChange: {
                confirmed.changed = true
            }
            try await store.settle(atLeast: 1)
            #expect(confirmed.changed)
        }
    }
}
