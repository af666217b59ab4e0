import ConformanceChecks
import FeedbackHostClient
import FeedbackHostTesting
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client tests' way to the server: every answer body they read is checked for our Swift type names
/// (`AnswerWords`), as the service tests' `curl` and `CheckedFetcher` check theirs. The client reads JSON answers
/// only, so every body is checked as JSON.
struct CheckedTransport: HostTransport {
    func send(_ request: URLRequest) async throws -> (body: Data, status: Int) {
        let answer = try await URLSessionTransport().send(request)
        AnswerWords.check(Array(answer.body), contentType: "application/json")
        return answer
    }
}

extension LocalInstance {
    /// `host`, its answers checked (`CheckedTransport`).
    var checkedHost: FeedbackHost { FeedbackHost(url: url, transport: CheckedTransport()) }

    /// `request`, its answer checked.
    @discardableResult
    func checkedRequest(_ method: String, _ path: String, body: Data? = nil) async throws -> Data {
        let data = try await request(method, path, body: body)
        AnswerWords.check(Array(data), contentType: "application/json")
        return data
    }
}

/// `URLSessionTransport.session.data(for:)` (the client's session, without a cache), its answer checked.
func checkedData(for request: URLRequest) async throws -> (Data, URLResponse) {
    let (data, response) = try await URLSessionTransport.session.data(for: request)
    AnswerWords.check(
        Array(data),
        contentType: (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type")
    )
    return (data, response)
}
