import ConformanceChecks
import CurlClient
import Dispatch
import Foundation
import Testing
import Upstream

/// The real binary pages its own demo catalog over loopback: sessions driven by POSTed events, watched through
/// GET snapshots, with the project's CurlFetcher (inside CheckedFetcher) as the client so no test thread blocks.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct PagingEndToEndTests {
    private func startServer() async throws -> RunningServer {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try RunningServer() }) }
        }
    }

    private func stop(_ server: RunningServer) async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                server.stop()
                continuation.resume()
            }
        }
    }

    private func object(_ response: UpstreamResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    private func post(_ client: CheckedFetcher, _ url: String, _ body: String) async throws -> UpstreamResponse {
        try await client.fetch(
            UpstreamRequest(
                method: "POST",
                url: url,
                headers: ["Content-Type": "application/json"],
                body: Array(body.utf8)
            )
        )
    }

    /// Polls the session's snapshot (every 10 ms, at most 20 s) until its state satisfies `predicate`.
    private func state(
        _ client: CheckedFetcher,
        _ url: String,
        where predicate: ([String: Any]) -> Bool
    ) async throws -> [String: Any]? {
        for _ in 0..<2_000 {
            let snapshot = try await client.fetch(UpstreamRequest(url: url))
            if let state = object(snapshot)["state"] as? [String: Any], predicate(state) { return state }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    @Test func demoCatalogServesGitHubShapedPagesGzippedWhenAccepted() async throws {
        let server = try await startServer()
        let client = CheckedFetcher()
        let page = try await client.fetch(UpstreamRequest(url: "\(server.base)/demo/catalog?q=lamp&page=2"))
        #expect(page.status == 200)
        #expect(page.headers["Content-Encoding"] == "gzip")
        let body = object(page)
        let items = body["items"] as? [[String: Any]] ?? []
        #expect(items.count == 20)
        #expect(items.allSatisfy { ($0["name"] as? String)?.lowercased().contains("lamp") == true })
        let total = body["total_count"] as? Int ?? 0
        #expect(total > 40)
        let link = page.headers["Link"] ?? ""
        #expect(link.contains("<\(server.base)/demo/catalog?q=lamp&page=3>; rel=\"next\""))
        #expect(link.contains("rel=\"last\""))
        #expect(link.contains("<\(server.base)/demo/catalog?q=lamp&page=1>; rel=\"first\""))
        let last = try await client.fetch(
            UpstreamRequest(url: "\(server.base)/demo/catalog?q=lamp&per_page=100&page=\((total + 99) / 100)")
        )
        #expect(last.headers["Link"]?.contains("rel=\"next\"") == false)
        #expect(try await client.fetch(UpstreamRequest(url: "\(server.base)/demo/catalog?page=0")).status == 422)
        await client.shutdown()
        await stop(server)
    }

    @Test func pagingSessionPagesTheBuiltInCatalogOverLoopback() async throws {
        let server = try await startServer()
        let client = CheckedFetcher()
        let created = try await post(client, "\(server.base)/v1/sessions", #"{"system":"paging"}"#)
        #expect(created.status == 201)
        let id = try #require(object(created)["id"] as? String)
        let session = "\(server.base)/v1/sessions/\(id)"

        let searched = try await post(client, "\(session)/events", #"{"type":"search","query":"otter"}"#)
        #expect(searched.status == 200)
        let first = try await state(client, session) { $0["pagesLoaded"] as? Int == 1 }
        #expect(first?["status"] as? String == "idle")
        #expect((first?["items"] as? [Any])?.count == 20)
        let catalog = object(try await client.fetch(UpstreamRequest(url: "\(server.base)/demo/catalog?q=otter")))
        #expect(first?["total"] as? Int == catalog["total_count"] as? Int)

        #expect(try await post(client, "\(session)/events", #"{"type":"loadNextPage"}"#).status == 200)
        let second = try await state(client, session) { $0["pagesLoaded"] as? Int == 2 }
        let items = second?["items"] as? [[String: Any]] ?? []
        #expect(items.count == 40)
        #expect(Set(items.compactMap { $0["id"] as? Int }).count == 40)
        #expect((second?["nextPage"] as? String)?.hasSuffix("page=3") == true)

        #expect(try await post(client, "\(session)/events", #"{"type":"clear"}"#).status == 200)
        let cleared = try await state(client, session) { ($0["items"] as? [Any])?.isEmpty == true }
        #expect(cleared?["status"] as? String == "idle")
        await client.shutdown()
        await stop(server)
    }
}
