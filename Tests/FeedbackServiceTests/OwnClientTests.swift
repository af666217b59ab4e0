import ConformanceChecks
import CurlClient
import Foundation
import Testing
import Upstream

/// The binary driven by the project's own client, CurlFetcher (checked): many sessions and posts over reused connections.
@Suite(.timeLimit(.minutes(1)))
struct OwnClientTests {
    @Test func curlClientDrivesTwentySessionsConcurrently() async throws {
        let server = try RunningServer()
        defer { server.stop() }
        let client = CheckedFetcher()
        let json: UpstreamHeaders = ["Content-Type": "application/json"]
        let base = server.base
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<20 {
                group.addTask {
                    let created = try await client.fetch(
                        UpstreamRequest(
                            method: "POST",
                            url: "\(base)/v1/sessions",
                            headers: json,
                            body: Array(#"{"system":"counter"}"#.utf8)
                        )
                    )
                    #expect(created.status == 201)
                    let location = try #require(created.headers["Location"])
                    for _ in 0..<index {
                        let posted = try await client.fetch(
                            UpstreamRequest(
                                method: "POST",
                                url: "\(base)\(location)/events",
                                headers: json,
                                body: Array(#"{"type":"increment"}"#.utf8)
                            )
                        )
                        #expect(posted.status == 200)
                    }
                    let snapshot = try await client.fetch(UpstreamRequest(url: "\(base)\(location)"))
                    let body = try JSONSerialization.jsonObject(with: Data(snapshot.body)) as? [String: Any]
                    return ((body?["state"] as? [String: Any])?["count"] as? Int) == index ? 1 : 0
                }
            }
            return try await group.reduce(0, +)
        }
        await client.shutdown()
        #expect(counts == 20)
    }
}
