import CurlClient
import Foundation
import Synchronization
import Testing
import Upstream

/// What the clients were told: the sessions answered 201 and the events answered 200 (revision and item), and how
/// many writes were refused (503, 507). Thread-safe.
final class AcknowledgementLedger: Sendable {
    private struct State {
        var created: [String] = []
        var events: [String: [Int: String]] = [:]
        var acknowledged = 0
        var refused = 0
        var unexpected: [String] = []
        var stopped = false
    }

    private let state = Mutex(State())

    var counts: (acknowledged: Int, refused: Int) { state.withLock { ($0.acknowledged, $0.refused) } }
    var createdIDs: [String] { state.withLock { $0.created } }
    var unexpected: [String] { state.withLock { $0.unexpected } }

    /// Whether the clients should stop.
    var stopped: Bool { state.withLock { $0.stopped } }

    func stop() { state.withLock { $0.stopped = true } }

    func events(of id: String) -> [Int: String] { state.withLock { $0.events[id] ?? [:] } }

    func created(_ id: String) {
        state.withLock { $0.created.append(id) }
    }

    func posted(_ id: String, _ rev: Int, _ item: String) {
        state.withLock { $0.events[id, default: [:]][rev] = item }
    }

    /// Every acknowledged session exists in the server `api` talks to (restarted on the same journal), at least at
    /// its highest acknowledged revision, with each acknowledged `append` item at the revision its answer named.
    func expectDurable(in api: SessionAPIClient) async throws {
        for id in createdIDs {
            let answer = try await api.send("GET", "/v1/sessions/\(id)")
            #expect(answer.status == 200, "acknowledged session \(id) is \(answer.status) after the restart")
            let object = jsonObject(answer.bodyText)
            let items = ((object["state"] as? [String: Any])?["items"] as? [String]) ?? []
            let acknowledged = events(of: id)
            #expect((object["rev"] as? Int ?? -1) >= (acknowledged.keys.max() ?? 0))
            for (rev, item) in acknowledged {
                #expect(rev <= items.count && items[rev - 1] == item, "session \(id) lost event \(rev)")
            }
        }
    }

    /// Posts `{"type":"append","item":item}` to session `id` and counts the answer; returns its status.
    @discardableResult
    func append(_ item: String, to id: String, through api: SessionAPIClient) async throws -> Int {
        let body = #"{"type":"append","item":"\#(item)"}"#
        let answer = try await api.send("POST", "/v1/sessions/\(id)/events", body: body)
        answered(answer.status, body: answer.bodyText) {
            if let rev = jsonObject(answer.bodyText)["rev"] as? Int { posted(id, rev, item) }
        }
        return answer.status
    }

    /// Counts an answer; runs `acknowledge` for a 200 or 201.
    func answered(_ status: Int, body: String, acknowledge: () -> Void) {
        switch status {
        case 200, 201:
            acknowledge()
            state.withLock { $0.acknowledged += 1 }
        case 503, 507:
            state.withLock { $0.refused += 1 }
        default:
            state.withLock { $0.unexpected.append("\(status) \(body)") }
        }
    }
}
