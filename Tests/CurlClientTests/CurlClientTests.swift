import CurlClient
import Foundation
import Testing
import Upstream

/// Tests against the fixture upstream. Serialized: one of them counts the process's file descriptors.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct CurlClientTests {
    @Test func fetchReturnsStatusHeadersAndBody() async throws {
        try await withFixture { server, client in
            let response = try await client.fetch(UpstreamRequest(url: server.url("/json?i=7")))
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/json")
            #expect(response.bodyText == #"{"ok": true, "i": "7"}"#)
            #expect(response.url == server.url("/json?i=7"))
        }
    }

    @Test func httpErrorStatusIsAResponseNotAnError() async throws {
        try await withFixture { server, client in
            let response = try await client.fetch(UpstreamRequest(url: server.url("/status-code?code=503")))
            #expect(response.status == 503)
            #expect(response.bodyText.contains("as asked"))
        }
    }

    @Test func postSendsMethodHeadersAndBody() async throws {
        try await withFixture { server, client in
            let request = UpstreamRequest(
                method: "PUT",
                url: server.url("/echo"),
                headers: ["Content-Type": "application/json", "X-Custom": "yes"],
                body: Array(#"{"a":1}"#.utf8)
            )
            let response = try await client.fetch(request)
            let echo = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            #expect(echo?["method"] as? String == "PUT")
            #expect(echo?["body"] as? String == #"{"a":1}"#)
            #expect(echo?["contentType"] as? String == "application/json")
            #expect(echo?["custom"] as? String == "yes")
        }
    }

    @Test func pagedJSONFollowsLinkHeadersToTheLastPage() async throws {
        try await withFixture { server, client in
            var next: String? = server.url("/items?pages=4&size=3&page=1")
            var items: [Int] = []
            var pages = 0
            while let url = next {
                let response = try await client.fetch(UpstreamRequest(url: url))
                #expect(response.status == 200)
                let page = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
                items += page?["items"] as? [Int] ?? []
                let links = LinkHeader.parse(response.headers.values(for: "Link"))
                #expect(links.target(rel: "last") == server.url("/items?pages=4&size=3&page=4"))
                next = links.next
                pages += 1
            }
            #expect(pages == 4)
            #expect(items == Array(0..<12))
        }
    }

    @Test func gzipAndDeflateBodiesAreDecoded() async throws {
        try await withFixture { server, client in
            let gzipped = try await client.fetch(UpstreamRequest(url: server.url("/gzip")))
            let advertised = gzipped.headers["X-Seen-Accept-Encoding"] ?? ""
            for encoding in ["gzip", "deflate", "br", "zstd"] {
                #expect(advertised.contains(encoding), "Accept-Encoding was \(advertised)")
            }
            #expect(gzipped.headers["Content-Encoding"] == "gzip")
            #expect(gzipped.bodyText.hasPrefix(#"{"compressed": true"#))
            #expect(gzipped.body.count > 2000)
            let deflated = try await client.fetch(UpstreamRequest(url: server.url("/deflate")))
            #expect(deflated.bodyText.hasPrefix(#"{"deflated": true"#))
        }
    }

    @Test func connectionsToTheSameHostAreReused() async throws {
        try await withFixture { server, client in
            var connectionIDs: Set<String> = []
            for index in 0..<5 {
                let response = try await client.fetch(UpstreamRequest(url: server.url("/json?i=\(index)")))
                connectionIDs.insert(response.headers["X-Connection-Id"] ?? "none")
            }
            #expect(connectionIDs.count == 1)
        }
    }

    @Test func perHostLimitBoundsOpenConnections() async throws {
        let configuration = CurlFetcher.Configuration(maxConnectionsPerHost: 2)
        try await withFixture(configuration) { server, client in
            let ids = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let response = try await client.fetch(UpstreamRequest(url: server.url("/slow?ms=50")))
                        return response.headers["X-Connection-Id"] ?? "none"
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(ids.count <= 2)
            #expect(!ids.contains("none"))
        }
    }

    @Test func totalLimitBoundsOpenConnections() async throws {
        let configuration = CurlFetcher.Configuration(maxConnectionsPerHost: 0, maxConnectionsTotal: 3)
        try await withFixture(configuration) { server, client in
            let ids = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<9 {
                    group.addTask {
                        let response = try await client.fetch(UpstreamRequest(url: server.url("/slow?ms=50")))
                        return response.headers["X-Connection-Id"] ?? "none"
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(ids.count <= 3)
            #expect(!ids.contains("none"))
        }
    }

    @Test func twoHundredConcurrentTransfersAllSucceed() async throws {
        try await withFixture { server, client in
            let bodies = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let response = try await client.fetch(UpstreamRequest(url: server.url("/json?i=\(index)")))
                        return (response.status, response.bodyText)
                    }
                }
                return try await group.reduce(into: [(Int, String)]()) { $0.append($1) }
            }
            #expect(bodies.count == 200)
            #expect(bodies.allSatisfy { $0.0 == 200 })
            let indices = Set(bodies.compactMap { Int($0.1.split(separator: "\"").dropLast().last ?? "") })
            #expect(indices == Set(0..<200))
        }
    }
}
