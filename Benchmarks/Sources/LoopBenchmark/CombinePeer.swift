import OpenCombine

/// The same system as CombineFeedback builds it: the external input and each feedback's events merged (flatMap over the
/// publishers), scanned
/// with the reducer, and every state fed back to the feedbacks through a subject.
final class CombineLoop {
    let input = PassthroughSubject<BenchEvent, Never>()
    private var cancellable: AnyCancellable?
    private(set) var state: BenchState

    init(
        initial: BenchState,
        feedbacks: [(AnyPublisher<BenchState, Never>) -> AnyPublisher<BenchEvent, Never>]
    ) {
        state = initial
        let states = CurrentValueSubject<BenchState, Never>(initial)
        // OpenCombine has no MergeMany: flatMap over the publishers merges them the same way.
        let events = Publishers.Sequence<[AnyPublisher<BenchEvent, Never>], Never>(
            sequence: [input.eraseToAnyPublisher()] + feedbacks.map { $0(states.eraseToAnyPublisher()) }
        )
        .flatMap { $0 }
        cancellable =
            events
            .scan(initial) { (state: BenchState, event: BenchEvent) -> BenchState in
                var next = state
                reduceBench(&next, event)
                return next
            }
            .sink { [unowned self] (next: BenchState) in
                self.state = next
                states.send(next)
            }
    }

    func send(_ event: BenchEvent) { input.send(event) }
}

/// CombineFeedback's `react(request:)`: map, removeDuplicates, then the latest effect.
func combineReact(
    request: @escaping (BenchState) -> Int?
) -> (AnyPublisher<BenchState, Never>) -> AnyPublisher<BenchEvent, Never> {
    { states in
        states
            .map(request)
            .removeDuplicates()
            .map { request -> AnyPublisher<BenchEvent, Never> in
                guard let request else { return Empty().eraseToAnyPublisher() }
                return Just(BenchEvent.loaded(request)).eraseToAnyPublisher()
            }
            .switchToLatest()
            .eraseToAnyPublisher()
    }
}

func makeCombineLoop() -> CombineLoop {
    CombineLoop(
        initial: BenchState(),
        feedbacks: [combineReact(request: { $0.download }), combineReact(request: { $0.upload })]
    )
}
