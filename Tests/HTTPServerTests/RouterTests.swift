import Testing

@testable import HTTPServer

@Suite struct RouterTests {
    private func router() -> Router {
        var router = Router()
        router.get("/v1/sessions") { _ in Response.text("list") }
        router.post("/v1/sessions", maxBodySize: 10) { _ in Response.text("create") }
        router.get("/v1/sessions/{id}/events") { _ in Response.text("events") }
        router.delete("/v1/sessions/{id}") { _ in Response.text("delete") }
        return router
    }

    @Test func matchesLiteralPathsByMethod() {
        guard case .found(let route, _) = router().match(.post, "/v1/sessions") else {
            Issue.record("no match")
            return
        }
        #expect(route.method == .post)
        #expect(route.maxBodySize == 10)
    }

    /// A literal route wins over a parameter route of the same shape, whatever the other literal routes' lengths
    /// (a lookup hashes the path only when some literal route is as long).
    @Test func aLiteralRouteWinsOverAParameterRouteOfAnyLength() {
        var router = Router()
        router.get("/v1/sessions/{id}") { _ in Response.text("session") }
        for path in ["/v1/sessions/export", "/v1/sessions/x", "/v1/sessions/a-much-longer-literal-segment"] {
            router.get(path) { _ in Response.text(path) }
        }
        for path in ["/v1/sessions/export", "/v1/sessions/x", "/v1/sessions/a-much-longer-literal-segment"] {
            guard case .found(let route, let parameters) = router.match(.get, path) else {
                Issue.record("no match for \(path)")
                continue
            }
            #expect(route.pattern == Array(path.utf8))
            #expect(parameters == [:])
        }
        for path in ["/v1/sessions/exports", "/v1/sessions/y", "/v1/sessions/abcdefghijklmnopqrstuv"] {
            guard case .found(let route, let parameters) = router.match(.get, path) else {
                Issue.record("no match for \(path)")
                continue
            }
            #expect(route.pattern == Array("/v1/sessions/{id}".utf8))
            #expect(parameters["id"] == String(path.split(separator: "/").last!))
        }
        guard case .notFound = router.match(.get, "/v1") else {
            Issue.record("/v1 matched")
            return
        }
    }

    @Test func bindsAndPercentDecodesPathParameters() {
        guard case .found(_, let parameters) = router().match(.get, "/v1/sessions/a%2Fb%20c/events") else {
            Issue.record("no match")
            return
        }
        #expect(parameters == ["id": "a/b c"])
    }

    /// A parameter with nothing to decode is read where it lies in the path (`withUTF8`), one with escapes from its
    /// decoded value; both read as the subscript's text.
    @Test func readsAParameterFromThePathOrFromItsDecodedValue() {
        guard case .found(_, let plain) = router().match(.get, "/v1/sessions/3q2-7wAAAAAAAAAAAAAAAA/events"),
            case .found(_, let escaped) = router().match(.get, "/v1/sessions/a%2Fb/events")
        else {
            Issue.record("no match")
            return
        }
        #expect(plain["id"] == "3q2-7wAAAAAAAAAAAAAAAA")
        #expect(plain.withUTF8("id") { String(decoding: $0, as: UTF8.self) } == "3q2-7wAAAAAAAAAAAAAAAA")
        #expect(escaped.withUTF8("id") { String(decoding: $0, as: UTF8.self) } == "a/b")
        #expect(plain.withUTF8("name") { _ in true } == nil)
        #expect(plain == ["id": "3q2-7wAAAAAAAAAAAAAAAA"])
        var changed = plain
        changed["id"] = "other"
        #expect(changed.withUTF8("id") { String(decoding: $0, as: UTF8.self) } == "other")
    }

    @Test func answersHeadWithTheGetRoute() {
        guard case .found(let route, _) = router().match(.head, "/v1/sessions") else {
            Issue.record("no match")
            return
        }
        #expect(route.method == .get)
    }

    @Test func listsAllowedMethodsWhenOnlyTheMethodDiffers() {
        guard case .methodNotAllowed(let allow) = router().match(.put, "/v1/sessions") else {
            Issue.record("expected 405")
            return
        }
        #expect(allow == [.get, .head, .post])
        guard case .methodNotAllowed(let other) = router().match(.post, "/v1/sessions/x") else {
            Issue.record("expected 405")
            return
        }
        #expect(other == [.delete])
    }

    @Test func findsNothingForUnknownPathsOrMalformedEscapes() {
        guard case .notFound = router().match(.get, "/v2") else {
            Issue.record("expected 404")
            return
        }
        guard case .notFound = router().match(.get, "/v1/sessions/%zz/events") else {
            Issue.record("expected 404")
            return
        }
    }

    @Test func emptySegmentsMatchTheNormalizedPath() {
        for path in ["/v1/sessions/", "//v1//sessions", "/v1/sessions//"] {
            guard case .found(let route, _) = router().match(.get, path) else {
                Issue.record("no match for \(path)")
                continue
            }
            #expect(route.method == .get)
        }
        guard case .found(_, let parameters) = router().match(.get, "/v1//sessions/x/events/") else {
            Issue.record("no match")
            return
        }
        #expect(parameters == ["id": "x"])
    }

    @Test func aLiteralSegmentMustMatchBesideParameters() {
        guard case .notFound = router().match(.get, "/v1/sessions/x/stream") else {
            Issue.record("expected 404")
            return
        }
        guard case .notFound = router().match(.get, "/v1/other/x/events") else {
            Issue.record("expected 404")
            return
        }
    }

    @Test func pathsOfMoreSegmentsThanTheRoomStillMatchOrNot() {
        var router = router()
        let deep = "/" + (1...20).map { "s\($0)" }.joined(separator: "/")
        router.get(deep + "/{id}") { _ in Response.text("deep") }
        guard case .found(_, let parameters) = router.match(.get, deep + "/x") else {
            Issue.record("no match for a path of 21 segments")
            return
        }
        #expect(parameters == ["id": "x"])
        guard case .notFound = router.match(.get, deep + "/x/y") else {
            Issue.record("expected 404")
            return
        }
        // Mostly empty segments: 40 slashes, two segments.
        guard
            case .found(_, let id) = router.match(
                .delete,
                String(repeating: "/", count: 20) + "v1/sessions"
                    + String(repeating: "/", count: 20) + "y"
            )
        else {
            Issue.record("no match")
            return
        }
        #expect(id == ["id": "y"])
    }

    @Test func theAccessLogWritesTheRoutesPattern() {
        var out: [UInt8] = []
        router().appendRoute(of: "/v1/sessions/AAAAAAAAAAAAAAAAAAAAAA/events", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "/v1/sessions/{id}/events")
        out = []
        router().appendRoute(of: "/v1/sessions//x", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "/v1/sessions/{id}")
    }
}
