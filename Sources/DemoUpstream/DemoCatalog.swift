public import HTTPServer
import Synchronization

/// A deterministic product catalog served at `GET /demo/catalog?q=...&page=...&per_page=...` in the shape of
/// GitHub's search API: `total_count`, `incomplete_results`, `items`, and `Link` headers with `rel="next"`,
/// `"last"`, `"prev"` and `"first"`. The `paging` system's default upstream, so the whole loop runs offline.
///
/// The items are generated once at start (the same on every run); `q` keeps the items whose name or category
/// contains it, case-insensitively. Thread-safe: the items are immutable; recent filters are cached under a `Mutex`.
public final class DemoCatalog: Sendable {
    /// One generated item.
    public struct Item: Sendable, Equatable {
        /// From 1.
        public let id: Int
        /// For example "Amber Falcon Lamp 17".
        public let name: String
        /// One of a few categories.
        public let category: String
        /// In cents.
        public let priceCents: Int
    }

    /// Items per page unless `per_page` says otherwise.
    public static let defaultPageSize = 20
    /// The largest `per_page`.
    public static let maxPageSize = 100

    /// Every item, by id - 1.
    public let items: [Item]
    private let searchText: [String]
    private let json: [[UInt8]]
    private let matches = Mutex<[String: [Int]]>([:])

    /// Generates `count` items.
    public init(count: Int = 3_000) {
        let adjectives = [
            "Amber", "Brisk", "Cobalt", "Dusty", "Electric", "Frosted", "Golden", "Hidden", "Ivory", "Jade",
            "Keen", "Lunar", "Misty", "Noble", "Orange", "Polar", "Quiet", "Rapid", "Silver", "Tidal",
        ]
        let animals = ["Falcon", "Otter", "Lynx", "Heron", "Badger", "Fox", "Marten", "Owl", "Bison", "Wren", "Hare"]
        let things = ["Lamp", "Kettle", "Chair", "Clock", "Backpack", "Notebook", "Mug", "Blanket", "Radio"]
        let categories = ["home", "kitchen", "office", "outdoor", "travel", "garden", "music"]
        var items: [Item] = []
        items.reserveCapacity(count)
        for id in 1...max(count, 1) {
            let name =
                "\(adjectives[(id * 7) % adjectives.count]) \(animals[(id * 13) % animals.count]) "
                + "\(things[(id * 5) % things.count]) \(id)"
            items.append(
                Item(
                    id: id,
                    name: name,
                    category: categories[(id * 3) % categories.count],
                    priceCents: 199 + (id * 37) % 9_800
                )
            )
        }
        self.items = items
        searchText = items.map { "\($0.name) \($0.category)".lowercased() }
        json = items.map { item in
            Array(
                #"{"id":\#(item.id),"name":"\#(item.name)","category":"\#(item.category)","price":\#(item.priceCents / 100).\#(item.priceCents % 100 < 10 ? "0" : "")\#(item.priceCents % 100)}"#
                    .utf8
            )
        }
    }

    /// The indices of the items matching `query` (every item for an empty one).
    public func matching(_ query: String) -> [Int] {
        let needle = query.lowercased()
        if needle.isEmpty { return Array(items.indices) }
        if let cached = matches.withLock({ $0[needle] }) { return cached }
        let found = searchText.indices.filter { searchText[$0].contains(needle) }
        matches.withLock { cache in
            if cache.count >= 256 { cache.removeAll(keepingCapacity: true) }
            cache[needle] = found
        }
        return found
    }

    /// Adds `GET /demo/catalog`.
    public func register(in router: inout Router) {
        router.get("/demo/catalog") { [self] request in respond(to: request) }
    }

    /// The answer to one catalog request.
    public func respond(to request: Request) -> Response {
        let query = request.queryParameter("q") ?? ""
        guard let page = Self.positive(request.queryParameter("page"), default: 1) else {
            return Response.problem(status: 422, detail: "page must be a whole number from 1, as in ?page=2")
        }
        guard let perPage = Self.positive(request.queryParameter("per_page"), default: Self.defaultPageSize),
            perPage <= Self.maxPageSize
        else {
            return Response.problem(
                status: 422,
                detail: "per_page must be a whole number from 1 to \(Self.maxPageSize), as in ?per_page=20"
            )
        }
        let found = matching(query)
        let lastPage = max(1, (found.count + perPage - 1) / perPage)
        let start = min(
            (page - 1).multipliedReportingOverflow(by: perPage).overflow ? found.count : (page - 1) * perPage,
            found.count
        )
        let end = min(start + perPage, found.count)
        var body = Array(#"{"total_count":\#(found.count),"incomplete_results":false,"items":["#.utf8)
        body.reserveCapacity(body.count + (end - start) * 96)
        for (offset, index) in found[start..<end].enumerated() {
            if offset > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: json[index])
        }
        body.append(contentsOf: "]}".utf8)
        var headers = HTTPHeaders([("Content-Type", "application/json")])
        let base = request.headers["Host"].map { "http://\($0)/demo/catalog" } ?? "/demo/catalog"
        let link = Self.links(
            base: base,
            query: query,
            perPage: request.queryParameter("per_page") == nil ? nil : perPage,
            page: page,
            lastPage: lastPage
        )
        if !link.isEmpty { headers.add(name: "Link", value: link) }
        return Response(status: 200, headers: headers, body: body)
    }

    /// GitHub's `Link` value: `<...&page=2>; rel="next", <...&page=9>; rel="last"`, plus prev and first after page 1.
    static func links(base: String, query: String, perPage: Int?, page: Int, lastPage: Int) -> String {
        func url(_ number: Int) -> String {
            var text = "\(base)?q=\(encode(query))"
            if let perPage { text += "&per_page=\(perPage)" }
            return text + "&page=\(number)"
        }
        var links: [String] = []
        if page > 1 {
            links.append("<\(url(min(page - 1, lastPage)))>; rel=\"prev\"")
        }
        if page < lastPage {
            links.append("<\(url(page + 1))>; rel=\"next\"")
            links.append("<\(url(lastPage))>; rel=\"last\"")
        }
        if page > 1 {
            links.append("<\(url(1))>; rel=\"first\"")
        }
        return links.joined(separator: ", ")
    }

    /// Percent-encodes a query component: unreserved characters stay, everything else is `%XX`.
    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%"
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 15)]))
            }
        }
        return out
    }

    private static func positive(_ text: String?, default value: Int) -> Int? {
        guard let text else { return value }
        guard let number = Int(text), number >= 1 else { return nil }
        return number
    }
}
