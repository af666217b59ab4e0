import ConformanceChecks
import CurlClient
import FeedbackService
import Foundation
import Logging
import Testing
import Upstream

@testable import Systems

/// The paging system hosted by the service in this process, against the fake upstream: deleting a session
/// cancels its transfer.
@Suite(.timeLimit(.minutes(1)))
struct PagingSessionTests {
    @Test func deletingASessionCancelsItsTransferInFlight() async throws {
        try await withPagingUpstream { upstream in
            let reader = ServiceApplication.defaultReader(
                arguments: ["feedback-host", "--port", "0", "--data-dir", "none", "--upstream", upstream.searchURL],
                environment: [:]
            )
            let application = try ServiceApplication.build(
                reader: reader,
                systems: [HostedSystem(PagingSystem(configuration: PagingConfiguration(upstream: upstream.searchURL)))],
                logger: Logger(label: "PagingSessionTests")
            )
            let port = try application.start()
            let client = CheckedFetcher()
            let base = "http://127.0.0.1:\(port)/v1/sessions"
            let json: UpstreamHeaders = ["Content-Type": "application/json"]
            let created = try await client.fetch(
                UpstreamRequest(method: "POST", url: base, headers: json, body: Array(#"{"system":"paging"}"#.utf8))
            )
            #expect(created.status == 201)
            let id = try #require(
                (try JSONSerialization.jsonObject(with: Data(created.body)) as? [String: Any])?["id"] as? String
            )
            let search = try await client.fetch(
                UpstreamRequest(
                    method: "POST",
                    url: "\(base)/\(id)/events",
                    headers: json,
                    body: Array(#"{"type":"search","query":"hang:k"}"#.utf8)
                )
            )
            #expect(search.status == 200)
            _ = try await upstream.wait(key: "k", event: "request")
            let deleted = try await client.fetch(UpstreamRequest(method: "DELETE", url: "\(base)/\(id)"))
            #expect(deleted.status == 204)
            let log = try await upstream.wait(key: "k", event: "closed")
            #expect(log.filter { $0["event"] as? String == "request" }.count == 1)
            await client.shutdown()
            await application.shutdown(deadline: .seconds(2))
        }
    }
}
