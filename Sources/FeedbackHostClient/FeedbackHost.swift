import FeedbackJSON
public import Foundation
public import SystemKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A FeedbackHost server as an app sees it: where it is and the token to send.
///
/// ```swift
/// let host = FeedbackHost(url: URL(string: "http://127.0.0.1:8080")!, token: nil)
/// let store = try await host.createStore(CounterSystem())
/// store.send(.increment)
/// ```
///
/// A value: copy it freely, from any thread.
public struct FeedbackHost: Sendable {
    /// The server's base URL.
    public var url: URL
    /// A bearer token (`--auth jwt`), nil when the server needs none.
    public var token: String?
    /// What sends the requests (not the stream): URLSession unless told otherwise.
    public var transport: any HostTransport

    /// A host at `url`, sending `token` when there is one, through `transport`.
    public init(url: URL, token: String? = nil, transport: any HostTransport = URLSessionTransport()) {
        self.url = url
        self.token = token
        self.transport = transport
    }

    /// A store following session `session` of `system` (it must be a session of that system). With `queueFile`, the
    /// store keeps its outbox there and takes back what a store of the same session left in it (docs/CLIENT.md).
    @MainActor
    public func store<System: FeedbackSystem>(
        _ system: System,
        session: String,
        queueFile: URL? = nil
    ) async throws -> RemoteStore<System> {
        let snapshot = try await call("GET", "/v1/sessions/\(session)")
        return try RemoteStore(system: system, host: self, session: session, snapshot: snapshot, queueFile: queueFile)
    }

    /// Creates a session of `system` and returns a store following it (its outbox in `queueFile` when given).
    @MainActor
    public func createStore<System: FeedbackSystem>(
        _ system: System,
        queueFile: URL? = nil
    ) async throws
        -> RemoteStore<System>
    {
        let body = JSONValue.object(["system": .string(system.name)]).serialized()
        let snapshot = try await call("POST", "/v1/sessions", body: Data(body))
        guard case .string(let id)? = snapshot["id"] else {
            throw HostClientError(status: 0, message: "the create answer has no id")
        }
        return try RemoteStore(system: system, host: self, session: id, snapshot: snapshot, queueFile: queueFile)
    }

    /// One request; the parsed JSON of a 2xx answer, else a `HostClientError` with the problem's detail.
    func call(
        _ method: String,
        _ path: String,
        body: Data? = nil,
        headers: [String: String] = [:]
    ) async throws
        -> [String: JSONValue]
    {
        let (status, json) = try await send(method, path, body: body, headers: headers)
        guard (200..<300).contains(status) else { throw Self.problem(status, json) }
        return json
    }

    /// One request: the status and the parsed JSON object of the answer (empty when it is not one).
    func send(
        _ method: String,
        _ path: String,
        body: Data? = nil,
        headers: [String: String] = [:]
    ) async throws
        -> (Int, [String: JSONValue])
    {
        var request = URLRequest(url: url.appendingPathComponent(path), timeoutInterval: 15)
        request.httpMethod = method
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let data: Data
        let status: Int
        do {
            (data, status) = try await transport.send(request)
        } catch {
            throw HostClientError(status: 0, message: "\(method) \(path): \(error)")
        }
        guard case .object(let json)? = try? JSONValue(parsing: Array(data)) else { return (status, [:]) }
        return (status, json)
    }

    static func problem(_ status: Int, _ json: [String: JSONValue]) -> HostClientError {
        var code: String?
        if case .string(let type)? = json["type"] { code = type.split(separator: ":").last.map(String.init) }
        if case .string(let detail)? = json["detail"] {
            return HostClientError(status: status, code: code, message: detail)
        }
        return HostClientError(status: status, code: code, message: "status \(status)")
    }
}
