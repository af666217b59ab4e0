import FeedbackHostClient
public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `POST /v1/clock/advance` answered (docs/API.md, "A clock tests move").
public struct ClockAdvance: Decodable, Sendable, Equatable {
    /// The clock's time before and after, in milliseconds since 1970.
    public let from: Int64
    /// The clock's time now.
    public let now: Int64
    /// Timers that fired in the span.
    public let timersFired: Int
    /// Passive sessions whose journaled deadline woke them.
    public let sessionsWoken: Int
    /// Whether everything the span started settled (false: a fetch outlived `--clock-settle-ms`).
    public let settled: Bool
}

extension LocalInstance {
    /// Moves the manual clock by `duration` through `POST /v1/clock/advance`; answers once every timer due in the
    /// span fired and its events were reduced, so a read right after sees every outcome. `.zero` waits until what
    /// is under way has settled.
    @discardableResult
    public func advance(by duration: Duration) async throws -> ClockAdvance {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        let data = try await request(
            "POST",
            "/v1/clock/advance",
            body: Data("{\"milliseconds\":\(milliseconds)}".utf8)
        )
        do {
            return try JSONDecoder().decode(ClockAdvance.self, from: data)
        } catch {
            throw LocalInstanceError(
                .requestFailed,
                "POST /v1/clock/advance answered what is not an advance: \(String(decoding: data, as: UTF8.self))"
            )
        }
    }

    /// The manual clock's time, in milliseconds since 1970 (`GET /v1/clock`).
    public func now() async throws -> Int64 {
        struct Clock: Decodable { let now: Int64 }
        return try JSONDecoder().decode(Clock.self, from: try await request("GET", "/v1/clock")).now
    }

    /// Sends one request to the instance and returns the body of a 2xx answer; any other status (or no answer within
    /// 30 s) throws a `LocalInstanceError` with the answer and the log's tail.
    @discardableResult
    public func request(_ method: String, _ path: String, body: Data? = nil) async throws -> Data {
        var request = URLRequest(url: url.appendingPathComponent(path), timeoutInterval: 30)
        request.httpMethod = method
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSessionTransport.session.data(for: request)
        } catch {
            throw LocalInstanceError(
                .requestFailed,
                "\(method) \(path) failed: \(error)\n\(Self.tail(of: log))"
            )
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw LocalInstanceError(
                .requestFailed,
                "\(method) \(path) answered \(status): \(String(decoding: data, as: UTF8.self))\n\(Self.tail(of: log))"
            )
        }
        return data
    }
}
