import FeedbackJSON

/// Maps a method and a path to a handler. Paths are literal segments and `{name}` parameters
/// (`/v1/sessions/{id}/events`). A GET route also answers HEAD (without a body).
///
/// A value built before the server starts and then only read, from every shard queue.
public struct Router: Sendable {
    /// How a route answers.
    public enum Handler: Sendable {
        /// Runs synchronously on the shard queue: for fast paths that never block.
        case sync(@Sendable (Request) throws -> Response)
        /// Runs in a `Task`; the response is written when it returns, from whatever thread it finishes on.
        case async(@Sendable (Request) async throws -> Response)
        /// Runs synchronously on the shard queue and answers through the ``Responder``, at once or later from
        /// any thread: for work that completes through a callback, with no `Task` and, when the answer comes
        /// before the handler returns, no hop. The handler must not block.
        case deferred(@Sendable (Request, Responder) -> Void)
    }

    /// A registered route. A class, immutable: a lookup's match, a request waiting for its body and the access log
    /// hold one reference each, not copies of its five fields.
    final class Route: Sendable {
        let method: HTTPMethod
        let segments: [Segment]
        let handler: Handler
        let maxBodySize: Int
        /// The pattern as the access log writes it: `/v1/sessions/{id}/events`.
        let pattern: [UInt8]

        init(method: HTTPMethod, segments: [Segment], handler: Handler, maxBodySize: Int, pattern: [UInt8]) {
            self.method = method
            self.segments = segments
            self.handler = handler
            self.maxBodySize = maxBodySize
            self.pattern = pattern
        }
    }

    enum Segment: Sendable, Equatable {
        /// A literal segment, as its UTF-8 bytes (compared byte for byte).
        case literal([UInt8])
        case parameter(String)
    }

    /// The outcome of a lookup.
    enum Match {
        case found(Route, parameters: PathParameters)
        case methodNotAllowed(allow: [HTTPMethod])
        case notFound
    }

    /// The body limit of routes registered without one.
    public var defaultMaxBodySize: Int
    /// The routes and the lookup's tables, in one object: a copy of the router (each lookup's `server.router`) retains
    /// one reference, not six. Copied on write by the registering methods.
    private var box = TablesBox(Tables())

    struct Tables {
        var staticRoutes: [String: [Route]] = [:]
        /// Whether some literal route's path is this many bytes long: most requests are for a parameter route, and
        /// a path of a length no literal route has skips hashing it for `staticRoutes`.
        var staticPathLengths: [Bool] = []
        var parameterRoutes: [Route] = []
        /// For each segment count, the indices of the parameter routes with that many segments, in the order they
        /// were registered: a lookup compares only those, and copies only the routes that match.
        var parameterRoutesBySegmentCount: [[Int]] = []
        /// What a lookup compares for each parameter route (by its index): its literal segments, the last first (it
        /// tells most routes of a length apart), as ranges of `literalBytes`; flat, so that a comparison retains
        /// nothing.
        var literalChecks: [LiteralCheck] = []
        var literalChecksOfRoute: [Range<Int>] = []
        var literalBytes: [UInt8] = []
    }

    final class TablesBox: @unchecked Sendable {  // mutated only while uniquely referenced (before the server starts)
        /// Read by every request of every shard once the server runs, written never: no run-time exclusivity check.
        @exclusivity(unchecked)
        var tables: Tables
        init(_ tables: Tables) { self.tables = tables }
    }

    var staticRoutes: [String: [Route]] { box.tables.staticRoutes }
    var parameterRoutes: [Route] { box.tables.parameterRoutes }
    var parameterRoutesBySegmentCount: [[Int]] { box.tables.parameterRoutesBySegmentCount }

    /// One literal segment of a parameter route: its place in the path and its bytes in ``literalBytes``.
    struct LiteralCheck {
        var position: Int
        var bytes: Range<Int>
    }

    /// Creates an empty router.
    public init(defaultMaxBodySize: Int = 1 << 20) {
        self.defaultMaxBodySize = defaultMaxBodySize
    }

    /// Registers a handler for a method and a path pattern.
    public mutating func route(_ method: HTTPMethod, _ path: String, maxBodySize: Int? = nil, handler: Handler) {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true).map { s -> Segment in
            s.hasPrefix("{") && s.hasSuffix("}") && s.count > 2
                ? .parameter(String(s.dropFirst().dropLast())) : .literal(Array(s.utf8))
        }
        var pattern: [UInt8] = segments.isEmpty ? [UInt8(ascii: "/")] : []
        for segment in segments {
            pattern.append(UInt8(ascii: "/"))
            switch segment {
            case .literal(let literal): pattern.append(contentsOf: literal)
            case .parameter(let name): pattern.append(contentsOf: "{\(name)}".utf8)
            }
        }
        let route = Route(
            method: method,
            segments: segments,
            handler: handler,
            maxBodySize: maxBodySize ?? defaultMaxBodySize,
            pattern: pattern
        )
        if !isKnownUniquelyReferenced(&box) { box = TablesBox(box.tables) }
        Self.register(route, segments, in: &box.tables)
    }

    private static func register(_ route: Route, _ segments: [Segment], in tables: inout Tables) {
        if segments.contains(where: { if case .parameter = $0 { true } else { false } }) {
            while tables.parameterRoutesBySegmentCount.count <= segments.count {
                tables.parameterRoutesBySegmentCount.append([])
            }
            tables.parameterRoutesBySegmentCount[segments.count].append(tables.parameterRoutes.count)
            tables.parameterRoutes.append(route)
            let first = tables.literalChecks.count
            for (position, segment) in segments.enumerated().reversed() {
                guard case .literal(let literal) = segment else { continue }
                tables.literalChecks.append(
                    LiteralCheck(
                        position: position,
                        bytes: tables.literalBytes.count..<tables.literalBytes.count + literal.count
                    )
                )
                tables.literalBytes.append(contentsOf: literal)
            }
            tables.literalChecksOfRoute.append(first..<tables.literalChecks.count)
        } else {
            let path =
                "/"
                + segments.map { if case .literal(let l) = $0 { String(decoding: l, as: UTF8.self) } else { "" } }
                .joined(separator: "/")
            tables.staticRoutes[path, default: []].append(route)
            let length = path.utf8.count
            if tables.staticPathLengths.count <= length {
                tables.staticPathLengths += Array(repeating: false, count: length + 1 - tables.staticPathLengths.count)
            }
            tables.staticPathLengths[length] = true
        }
    }

    /// Registers a synchronous handler (runs on the shard queue).
    public mutating func route(
        _ method: HTTPMethod,
        _ path: String,
        maxBodySize: Int? = nil,
        _ handler: @escaping @Sendable (Request) throws -> Response
    ) {
        route(method, path, maxBodySize: maxBodySize, handler: .sync(handler))
    }

    /// Registers an asynchronous handler (runs in a Task).
    public mutating func route(
        _ method: HTTPMethod,
        _ path: String,
        maxBodySize: Int? = nil,
        _ handler: @escaping @Sendable (Request) async throws -> Response
    ) {
        route(method, path, maxBodySize: maxBodySize, handler: .async(handler))
    }

    /// Registers a deferred handler: it answers through its ``Responder``, now or later.
    public mutating func route(
        _ method: HTTPMethod,
        _ path: String,
        maxBodySize: Int? = nil,
        deferred handler: @escaping @Sendable (Request, Responder) -> Void
    ) {
        route(method, path, maxBodySize: maxBodySize, handler: .deferred(handler))
    }

    /// Registers a synchronous GET handler.
    public mutating func get(_ path: String, _ handler: @escaping @Sendable (Request) throws -> Response) {
        route(.get, path, handler: .sync(handler))
    }

    /// Registers an asynchronous GET handler.
    public mutating func get(_ path: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        route(.get, path, handler: .async(handler))
    }

    /// Registers a synchronous POST handler.
    public mutating func post(
        _ path: String,
        maxBodySize: Int? = nil,
        _ handler: @escaping @Sendable (Request) throws -> Response
    ) {
        route(.post, path, maxBodySize: maxBodySize, handler: .sync(handler))
    }

    /// Registers an asynchronous POST handler.
    public mutating func post(
        _ path: String,
        maxBodySize: Int? = nil,
        _ handler: @escaping @Sendable (Request) async throws -> Response
    ) {
        route(.post, path, maxBodySize: maxBodySize, handler: .async(handler))
    }

    /// Registers a synchronous PUT handler.
    public mutating func put(
        _ path: String,
        maxBodySize: Int? = nil,
        _ handler: @escaping @Sendable (Request) throws -> Response
    ) {
        route(.put, path, maxBodySize: maxBodySize, handler: .sync(handler))
    }

    /// Registers a synchronous DELETE handler.
    public mutating func delete(_ path: String, _ handler: @escaping @Sendable (Request) throws -> Response) {
        route(.delete, path, handler: .sync(handler))
    }

    /// Finds the route for a method and a path (not percent-decoded; parameters are decoded here).
    /// The path is scanned once as bytes; a parameter route's literals are compared before any parameter is
    /// decoded, and only the parameters of matching routes are made.
    func match(_ method: HTTPMethod, _ path: String) -> Match {
        if mayBeStatic(path), let candidates = staticRoutes[path] { return Self.choose(method, candidates) }
        return path.withUTF8Bytes { match(method, bytes: $0, of: path) }
    }

    /// ``match(_:_:)`` of a path's UTF-8 bytes.
    private func match(_ method: HTTPMethod, bytes: UnsafeBufferPointer<UInt8>, of path: String) -> Match {
        withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: Self.mostSegments) { room in
            let split = Self.split(bytes, into: room)
            // Past the room: more segments than any route has, unless the path is mostly empty segments.
            guard split.count >= 0 else { return matchLongPath(method, bytes, of: path) }
            return matchSegments(method, bytes, UnsafeBufferPointer(rebasing: room[..<split.count]), split, path)
        }
    }

    /// Whether a literal route could have `path` (one of them is as long).
    func mayBeStatic(_ path: String) -> Bool {
        let length = path.utf8.count
        let lengths = box.tables.staticPathLengths
        return length < lengths.count && lengths[length]
    }

    /// The most segments a path is split into without allocating; a longer path is split into an array.
    static let mostSegments = 16

    /// How a path splits into segments.
    struct Split {
        /// The non-empty segments found, or -1 when there are more than the room holds.
        var count: Int
        /// Whether `//`, a trailing `/` or a missing leading `/` made empty segments, which are dropped.
        var droppedEmpty: Bool
        /// Whether a segment is longer than ``longestLoggedSegment``.
        var long: Bool
    }

    /// Writes the byte ranges of the path's non-empty segments into `room`.
    static func split(_ bytes: UnsafeBufferPointer<UInt8>, into room: UnsafeMutableBufferPointer<Range<Int>>) -> Split {
        var split = Split(count: 0, droppedEmpty: bytes.first != UInt8(ascii: "/"), long: false)
        var start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "/") {
            split.long = split.long || index - start > longestLoggedSegment
            if index > start {
                if split.count == room.count {
                    split.count = -1
                    return split
                }
                room[split.count] = start..<index
                split.count += 1
            } else if index > 0 {
                split.droppedEmpty = true
            }
            start = index + 1
        }
        return split
    }

    private func matchSegments(
        _ method: HTTPMethod,
        _ bytes: UnsafeBufferPointer<UInt8>,
        _ parts: UnsafeBufferPointer<Range<Int>>,
        _ split: Split,
        _ path: String
    ) -> Match {
        if split.droppedEmpty {
            let normalized = "/" + parts.map { String(decoding: bytes[$0], as: UTF8.self) }.joined(separator: "/")
            if let candidates = staticRoutes[normalized] { return Self.choose(method, candidates) }
        }
        // The usual case first: the route this method picks among those whose literals match, with its parameters
        // decoded once. A parameter that does not percent-decode rules its routes out: the full search below.
        guard parts.count < parameterRoutesBySegmentCount.count else { return .notFound }
        let sameLength = parameterRoutesBySegmentCount[parts.count]
        // What `pick` would choose among the matching routes, found without listing them: the first of this method,
        // else for HEAD the first GET.
        var anyMatches = false
        var picked: Int?
        for index in sameLength where literalsMatch(route: index, parts, bytes) {
            anyMatches = true
            let routeMethod = parameterRoutes[index].method
            if routeMethod == method {
                picked = index
                break
            }
            if method == .head, routeMethod == .get, picked == nil { picked = index }
        }
        guard anyMatches else { return .notFound }
        if let picked, let parameters = Self.parameters(of: parameterRoutes[picked], in: parts, of: bytes, path) {
            return .found(parameterRoutes[picked], parameters: parameters)
        }
        let matching = sameLength.filter { literalsMatch(route: $0, parts, bytes) }.map { parameterRoutes[$0] }
        var candidates: [(route: Route, parameters: PathParameters)] = []
        for route in matching {
            guard let parameters = Self.parameters(of: route, in: parts, of: bytes, path) else { continue }
            candidates.append((route, parameters))
        }
        guard !candidates.isEmpty else { return .notFound }
        if let route = Self.pick(method, candidates.map(\.route)),
            let found = candidates.first(where: { $0.route.method == route.method })
        {
            return .found(route, parameters: found.parameters)
        }
        return .methodNotAllowed(allow: Self.allow(candidates.map(\.route)))
    }

    /// A path of more than ``mostSegments`` segments, split into an array.
    private func matchLongPath(_ method: HTTPMethod, _ bytes: UnsafeBufferPointer<UInt8>, of path: String) -> Match {
        let separators = bytes.lazy.filter { $0 == UInt8(ascii: "/") }.count
        var room = [Range<Int>](repeating: 0..<0, count: separators + 1)
        return room.withUnsafeMutableBufferPointer { room in
            let split = Self.split(bytes, into: room)
            return matchSegments(method, bytes, UnsafeBufferPointer(rebasing: room[..<split.count]), split, path)
        }
    }

    /// Whether every literal segment of the parameter route at `index` equals the path's segment at its place (the
    /// path has as many segments as the route).
    func literalsMatch(
        route index: Int,
        _ parts: UnsafeBufferPointer<Range<Int>>,
        _ bytes: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        let box = box
        return box.tables.literalChecks.withUnsafeBufferPointer { checks in
            box.tables.literalBytes.withUnsafeBufferPointer { literals in
                for check in checks[box.tables.literalChecksOfRoute[index]] {
                    let part = parts[check.position]
                    guard check.bytes.count == part.count else { return false }
                    var offset = 0
                    while offset < part.count {
                        guard literals[check.bytes.lowerBound + offset] == bytes[part.lowerBound + offset] else {
                            return false
                        }
                        offset += 1
                    }
                }
                return true
            }
        }
    }

    private static func choose(_ method: HTTPMethod, _ candidates: [Route]) -> Match {
        if let route = pick(method, candidates) { return .found(route, parameters: [:]) }
        return .methodNotAllowed(allow: allow(candidates))
    }

    /// The decoded parameters of a route whose literals match; nil when one does not percent-decode.
    private static func parameters(
        of route: Route,
        in parts: UnsafeBufferPointer<Range<Int>>,
        of bytes: UnsafeBufferPointer<UInt8>,
        _ path: String
    ) -> PathParameters? {
        var parameters = PathParameters()
        for (segment, part) in zip(route.segments, parts) {
            guard case .parameter(let name) = segment else { continue }
            let raw = UnsafeBufferPointer(rebasing: bytes[part])
            // Nothing to decode (a session id): left where it is in the path, no string made for it.
            guard raw.contains(UInt8(ascii: "%")) else {
                parameters.add(name, at: part, of: path)
                continue
            }
            guard let value = PercentDecoding.decode(raw, plusIsSpace: false) else { return nil }
            parameters[name] = value
        }
        return parameters
    }

    private static func pick(_ method: HTTPMethod, _ routes: [Route]) -> Route? {
        if let exact = routes.first(where: { $0.method == method }) { return exact }
        if method == .head { return routes.first { $0.method == .get } }
        return nil
    }

    private static func allow(_ routes: [Route]) -> [HTTPMethod] {
        var methods = Set(routes.map(\.method))
        if methods.contains(.get) { methods.insert(.head) }
        return HTTPMethod.allCases.filter { methods.contains($0) }
    }
}
