import FeedbackLoop
import Synchronization
import Testing

/// The seeds' examples: the counter, Play Catch and a paging list.
@Suite(.timeLimit(.minutes(1)))
struct ExampleTests {
    enum CounterEvent: Sendable {
        case increment
        case decrement
    }

    @Test func counterIncrementsAndDecrements() {
        let loop = Loop<Int, CounterEvent>(initial: 0) { count, event in
            switch event {
            case .increment: count += 1
            case .decrement: count -= 1
            }
        }
        loop.send(.increment)
        loop.send(.increment)
        loop.send(.decrement)
        #expect(loop.state == 1)
    }

    enum Catch: Sendable, Equatable {
        case humanHasIt
        case machineHasIt
    }

    enum CatchEvent: Sendable {
        case throwToMachine
        case throwToHuman
    }

    /// The machine's feedback, with time injected: the service passes `ContinuousClock()`, tests a `TestClock`.
    static func machinePitching(clock: any Clock<Duration>) -> Feedback<Catch, CatchEvent> {
        .react(
            request: { $0 == .machineHasIt ? true : nil },
            effect: { _ in
                try await clock.sleep(for: .seconds(1))
                return .throwToHuman
            }
        )
    }

    @Test func playCatchMachineThrowsBackAfterOneVirtualSecond() async {
        let clock = TestClock()
        let machine = Self.machinePitching(clock: clock)
        let loop = Loop<Catch, CatchEvent>(
            initial: .humanHasIt,
            reduce: { state, event in
                switch event {
                case .throwToMachine: state = .machineHasIt
                case .throwToHuman: state = .humanHasIt
                }
            },
            feedbacks: [machine]
        )
        loop.send(.throwToMachine)
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(999))
        #expect(loop.state == .machineHasIt)
        clock.advance(by: .milliseconds(1))
        await firstState(of: loop) { $0 == .humanHasIt }
        loop.send(.throwToMachine)
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        let state = await firstState(of: loop) { $0 == .humanHasIt }
        #expect(state == .humanHasIt)
        #expect(loop.revision == 4)
    }

    struct Paging: Sendable, Equatable {
        var results: [String] = []
        var nextPage: Int? = 1
        var shouldLoadNextPage = true
        var lastError: String?

        /// The page to load: effects encoded in the state.
        var loadPage: Int? { shouldLoadNextPage && lastError == nil ? nextPage : nil }
    }

    enum PagingEvent: Sendable {
        case scrolledNearBottom
        case response(page: [String], next: Int?)
        case failed(String)
        case retry
    }

    static func reducePaging(_ state: inout Paging, _ event: PagingEvent) {
        switch event {
        case .scrolledNearBottom:
            state.shouldLoadNextPage = true
        case .response(let page, let next):
            state.results += page
            state.nextPage = next
            state.shouldLoadNextPage = false
        case .failed(let message):
            state.lastError = message
        case .retry:
            state.lastError = nil
        }
    }

    /// A fake fetcher: three pages of two items; page 2 fails the first time.
    final class FakeFetcher: Sendable {
        struct Failure: Error {}
        private let calls = Mutex<[Int]>([])

        var requested: [Int] { calls.withLock { $0 } }

        func fetch(page: Int) async throws -> ([String], Int?) {
            let attempt = calls.withLock { calls -> Int in
                calls.append(page)
                return calls.filter { $0 == page }.count
            }
            if page == 2 && attempt == 1 { throw Failure() }
            return (["item \(page)a", "item \(page)b"], page < 3 ? page + 1 : nil)
        }
    }

    @Test func pagingLoadsPagesOnDemandAndRetriesAfterAFailure() async {
        let fetcher = FakeFetcher()
        let paging = Feedback<Paging, PagingEvent>.react(
            request: { $0.loadPage },
            onError: { _ in .failed("offline") },
            effect: { page in
                let (items, next) = try await fetcher.fetch(page: page)
                return .response(page: items, next: next)
            }
        )
        let loop = Loop(initial: Paging(), reduce: Self.reducePaging, feedbacks: [paging])
        await firstState(of: loop) { $0.results.count == 2 }
        loop.send(.scrolledNearBottom)
        await firstState(of: loop) { $0.lastError != nil }
        loop.send(.retry)
        await firstState(of: loop) { $0.results.count == 4 }
        loop.send(.scrolledNearBottom)
        let last = await firstState(of: loop) { $0.nextPage == nil }
        #expect(last?.results == ["item 1a", "item 1b", "item 2a", "item 2b", "item 3a", "item 3b"])
        loop.send(.scrolledNearBottom)
        #expect(fetcher.requested == [1, 2, 2, 3])
    }
}
