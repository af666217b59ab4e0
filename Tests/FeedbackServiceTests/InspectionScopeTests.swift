import FeedbackService
import Foundation
import Testing
import Upstream

/// Who may inspect (issue 32) with `--auth jwt`: the `inspect` scope, between post and admin, reads history, states,
/// diffs and the list across the sessions its token covers; read and post cannot; another session's token sees nothing.
@Suite(.timeLimit(.minutes(1)))
struct InspectionScopeTests {
    @Test func theScopeMatrixOfTheInspectionRoutes() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let server = try await AuthTestServer.start(dataDirectory: directory.path)
        var ids: [String] = []
        var minted: [[String: String]] = []
        for _ in 0..<2 {
            let create = try await server.sign(system: "counter", scope: "create")
            let created = try await server.send("POST", "/v1/sessions", token: create, body: #"{"system":"counter"}"#)
            #expect(created.status == 201, "\(created.bodyText)")
            let object = jsonObject(created.bodyText)
            ids.append(object["id"] as? String ?? "")
            minted.append(object["tokens"] as? [String: String] ?? [:])
        }
        let (mine, other) = (ids[0], ids[1])
        let post = try await server.send(
            "POST",
            "/v1/sessions/\(mine)/events",
            token: minted[0]["post"],
            body: #"{"type":"increment"}"#
        )
        #expect(post.status == 200)
        let paths = [
            "/v1/sessions/\(mine)/history", "/v1/sessions/\(mine)/states/1", "/v1/sessions/\(mine)/diff?from=0&to=1",
        ]
        func statuses(_ token: String?) async throws -> [Int] {
            var answers: [Int] = []
            for path in paths { answers.append(try await server.send("GET", path, token: token).status) }
            return answers
        }
        #expect(try await statuses(nil) == [401, 401, 401])
        for scope in ["read", "post"] {
            let token = try await server.sign(sid: mine, scope: scope)
            #expect(try await statuses(token) == [403, 403, 403], "\(scope)")
            #expect(try await server.send("GET", "/v1/sessions", token: token).status == 403, "\(scope)")
        }
        #expect(try await statuses(minted[0]["read"]) == [403, 403, 403])
        let inspect = try await server.sign(sid: mine, scope: "inspect")
        #expect(try await statuses(inspect) == [200, 200, 200])
        #expect(try await statuses(minted[0]["admin"]) == [200, 200, 200])
        // Another session's inspect token sees nothing of this one.
        let foreign = try await server.sign(sid: other, scope: "inspect")
        #expect(try await statuses(foreign) == [403, 403, 403])
        // The list shows only the sessions the token covers, and counts only to a token of whole systems.
        let listed = try await server.send("GET", "/v1/sessions", token: inspect)
        #expect(listed.status == 200)
        #expect(listed.bodyText.contains(mine) && !listed.bodyText.contains(other))
        #expect(!listed.bodyText.contains("counts"))
        let system = try await server.sign(system: "counter", scope: "inspect")
        let all = try await server.send("GET", "/v1/sessions", token: system)
        #expect(all.bodyText.contains(mine) && all.bodyText.contains(other))
        #expect(all.bodyText.contains(#""counts""#))
        // inspect does not reach admin's routes: it cannot delete.
        #expect(try await server.send("DELETE", "/v1/sessions/\(mine)", token: inspect).status == 403)
        await server.stop()
    }
}
