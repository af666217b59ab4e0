public import FeedbackLoop
public import SystemKit

/// The seeds' infinite list: a search over a paged upstream API, one page at a time.
///
/// The state says which page should load next; the fetch feedback (a `react(request:)` on that page) fetches it
/// with the environment's upstream client and the reducer appends it. A new search, a clear or the session's end
/// cancels the transfer in flight. By default it pages through the server's own demo catalog over loopback.
public struct PagingSystem: FeedbackSystem {
    /// The upstream and how patiently it is fetched.
    public let configuration: PagingConfiguration

    /// Creates the system.
    public init(configuration: PagingConfiguration = PagingConfiguration()) {
        self.configuration = configuration
    }

    public var name: String { "paging" }
    public var summary: String {
        "An infinite list: search sends the query upstream and loads the first page; loadNextPage appends the next "
            + "one (Link rel=\"next\" or a next field), retry reloads a failed page, clear starts over."
    }
    public var exampleEvents: [Event] { [.search(query: "lamp"), .loadNextPage, .retry, .clear] }
    public var initialState: State { State() }

    /// Client events start, continue, retry or forget a search; the feedback's events only count while loading.
    public static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .search(let query):
            state = State(query: query, status: .loading, generation: state.generation &+ 1)
        case .clear:
            state = State(generation: state.generation &+ 1)
        case .loadNextPage:
            guard state.status == .idle, state.nextPage != nil else { return }
            state.status = .loading
        case .retry:
            guard case .failed = state.status else { return }
            state.status = .loading
        case .pageLoaded(let page):
            guard state.status == .loading else { return }
            append(page, to: &state)
        case .retrying(_, let attempt, let reason, let delay):
            guard state.status == .loading else { return }
            state.retries = attempt
            state.lastError = "\(reason); retrying in \(delay) ms"
        case .pageFailed(_, let message):
            guard state.status == .loading else { return }
            state.status = .failed(message: message)
            state.retries = 0
            state.lastError = nil
        }
    }

    private static func append(_ page: Page, to state: inout State) {
        state.items.append(contentsOf: page.items)
        state.pagesLoaded = state.pagesLoaded.saturatingAdding(1)
        if let total = page.total { state.total = total }
        state.visited.append(page.url)
        state.retries = 0
        state.lastError = nil
        if let next = page.next, !state.visited.contains(next) {
            state.nextPage = next
            state.status = .idle
        } else {
            state.status = .exhausted
            state.endReason =
                if let next = page.next {
                    "the upstream named \(next) again; stopped"
                } else {
                    page.stop ?? "the upstream has no further page"
                }
            state.nextPage = nil
        }
    }

    public func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
        let upstream = configuration.upstream ?? environment.localBaseURL.map { "\($0)/demo/catalog" }
        let reader = upstream.map { PageReader(configuration: configuration, upstream: $0) }
        let client = environment.upstream
        let clock = environment.clock
        let logger = environment.logger
        return [
            .react(
                request: { PageRequest($0) },
                effects: { request in
                    PageFetch(request: request, reader: reader, upstream: client, clock: clock, logger: logger)
                }
            )
        ]
    }
}
