public import FeedbackJSON
public import SystemKit

extension PagingSystem {
    /// What the list shows and what the fetch feedback should do next.
    ///
    /// The effect is encoded here: while `status` is `loading`, the feedback fetches `nextPage` for the search
    /// `generation`; any change of either cancels that fetch. A value type: safe to pass anywhere.
    ///
    /// On the wire `status` is a string (`idle`, `loading`, `failed`, `exhausted`) and a failure's text is in
    /// `message`, so that a page can write `state.status === "loading"`.
    public struct State: Codable, Equatable, Sendable {
        /// Where the list is.
        public enum Status: Equatable, Sendable {
            /// Nothing is being fetched; `loadNextPage` fetches `nextPage` if there is one.
            case idle
            /// The feedback is fetching `nextPage`.
            case loading
            /// The last fetch failed for good; `retry` fetches `nextPage` again.
            case failed(message: String)
            /// There is nothing more to load (`endReason` says why).
            case exhausted
        }

        /// The search the items answer; empty before the first search.
        public var query: String
        /// The items of every page loaded so far, in order, as the upstream wrote them.
        public var items: [JSONValue]
        /// The absolute URL of the page to load next; nil before a search and once exhausted.
        public var nextPage: String?
        /// Where the list is.
        public var status: Status
        /// Pages appended since the search.
        public var pagesLoaded: Int
        /// The number of matches if the upstream says (`total_count` by default).
        public var total: Int?
        /// Counts searches and clears, so that searching the same text again starts over.
        public var generation: Int
        /// Failed attempts at the page being loaded that will be retried; 0 once it arrives.
        public var retries: Int
        /// Why the latest attempt failed, while the feedback retries it.
        public var lastError: String?
        /// Why paging stopped, once exhausted.
        public var endReason: String?
        /// The pages loaded since the search, to stop on a link or cursor that comes back.
        public var visited: [String]

        /// Creates a state; the defaults are an empty list before any search.
        public init(
            query: String = "",
            items: [JSONValue] = [],
            nextPage: String? = nil,
            status: Status = .idle,
            pagesLoaded: Int = 0,
            total: Int? = nil,
            generation: Int = 0,
            retries: Int = 0,
            lastError: String? = nil,
            endReason: String? = nil,
            visited: [String] = []
        ) {
            self.query = query
            self.items = items
            self.nextPage = nextPage
            self.status = status
            self.pagesLoaded = pagesLoaded
            self.total = total
            self.generation = generation
            self.retries = retries
            self.lastError = lastError
            self.endReason = endReason
            self.visited = visited
        }

        enum CodingKeys: String, CodingKey {
            case query, items, nextPage, status, message, pagesLoaded, total, generation, retries, lastError
            case endReason, visited
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            query = try container.decodeIfPresent(String.self, forKey: .query) ?? ""
            items = try container.decodeIfPresent([JSONValue].self, forKey: .items) ?? []
            nextPage = try container.decodeIfPresent(String.self, forKey: .nextPage)
            let status = try container.decodeIfPresent(String.self, forKey: .status) ?? "idle"
            switch status {
            case "idle": self.status = .idle
            case "loading": self.status = .loading
            case "exhausted": self.status = .exhausted
            case "failed":
                self.status = .failed(message: try container.decodeIfPresent(String.self, forKey: .message) ?? "")
            default:
                throw DecodingError.dataCorruptedError(
                    forKey: .status,
                    in: container,
                    debugDescription: "status \"\(status)\" is not one of idle, loading, failed, exhausted"
                )
            }
            pagesLoaded = try container.decodeIfPresent(Int.self, forKey: .pagesLoaded) ?? 0
            total = try container.decodeIfPresent(Int.self, forKey: .total)
            generation = try container.decodeIfPresent(Int.self, forKey: .generation) ?? 0
            retries = try container.decodeIfPresent(Int.self, forKey: .retries) ?? 0
            lastError = try container.decodeIfPresent(String.self, forKey: .lastError)
            endReason = try container.decodeIfPresent(String.self, forKey: .endReason)
            visited = try container.decodeIfPresent([String].self, forKey: .visited) ?? []
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(query, forKey: .query)
            var list = container.nestedUnkeyedContainer(forKey: .items)
            try JSONValueWriter.write(items, into: &list)
            try container.encode(nextPage, forKey: .nextPage)
            switch status {
            case .idle: try container.encode("idle", forKey: .status)
            case .loading: try container.encode("loading", forKey: .status)
            case .exhausted: try container.encode("exhausted", forKey: .status)
            case .failed(let message):
                try container.encode("failed", forKey: .status)
                try container.encode(message, forKey: .message)
            }
            try container.encode(pagesLoaded, forKey: .pagesLoaded)
            try container.encode(total, forKey: .total)
            try container.encode(generation, forKey: .generation)
            try container.encode(retries, forKey: .retries)
            try container.encode(lastError, forKey: .lastError)
            try container.encode(endReason, forKey: .endReason)
            try container.encode(visited, forKey: .visited)
        }
    }
}

/// The state writes its own JSON (the status as a string, a failure's text beside it, absent members read as their
/// defaults), so its schema is written beside that coding rather than derived from the properties.
extension PagingSystem.State: JSONSchemaDescribing {
    public static var jsonSchema: JSONSchema {
        func optional(_ name: String, _ schema: JSONSchema) -> JSONSchema.Property {
            JSONSchema.Property(name, schema, required: false)
        }
        return .object([
            optional("query", .of(String.self)),
            optional("items", .of([JSONValue].self)),
            optional("nextPage", .of(String?.self)),
            optional("status", .strings(["idle", "loading", "failed", "exhausted"])),
            optional("message", .of(String.self)),
            optional("pagesLoaded", .of(Int.self)),
            optional("total", .of(Int?.self)),
            optional("generation", .of(Int.self)),
            optional("retries", .of(Int.self)),
            optional("lastError", .of(String?.self)),
            optional("endReason", .of(String?.self)),
            optional("visited", .of([String].self)),
        ])
    }
}
