import FeedbackJSON
import Foundation
import SystemKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Following the session's stream (`?mode=patch`, resumed with the last cursor): snapshots and patches move the
/// confirmed state, `clients` says which of this store's posts they include; a gap, an error or an end reconnects
/// after a jittered back-off, `moved` at once.
extension RemoteStore {
    func openStream() {
        guard !closed else { return }
        var components = URLComponents(
            url: host.url.appendingPathComponent("/v1/sessions/\(session)/stream"),
            resolvingAgainstBaseURL: false
        )
        components?.queryItems =
            [URLQueryItem(name: "mode", value: "patch")]
            + (cursor.map { [URLQueryItem(name: "lastEventId", value: $0)] } ?? [])
        guard let url = components?.url else { return }
        // Heartbeats come every 15 s: the reader takes 45 s without a byte for a dead connection.
        var request = URLRequest(url: url)
        if let token = host.token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        // On Linux the stream must not be its connection's first request (EventStreamReader): /healthz goes first.
        let reader = EventStreamReader(request: request, warmUp: host.url.appendingPathComponent("/healthz"))
        self.reader = reader
        streamTask = Task { [weak self] in
            for await happening in reader.events {
                guard let self, !self.closed else { break }
                if !self.take(happening) { break }
            }
            reader.cancel()
            await self?.reconnect(after: reader)
        }
    }

    /// Handles one thing the stream did; false ends this connection. (Internal: a test feeds it events.)
    func take(_ happening: EventStreamReader.Happening) -> Bool {
        switch happening {
        case .opened(let status):
            if status == 401 || status == 403 {
                connection = .needsToken
                return false
            }
            return status == 200
        case .closed:
            return false
        case .events(let events):
            // The stream's value follows every event; the confirmed state (decoded, reconciled, observed) only the
            // last of those that arrived together.
            var last: [String: JSONValue]?
            defer { if let last { confirmStreamState(last) } }
            for event in events where !take(event, last: &last) { return false }
            return true
        }
    }

    /// Applies one event to the stream's value (`last` is then its JSON); false ends this connection.
    private func take(_ event: ServerSentEvent, last: inout [String: JSONValue]?) -> Bool {
        guard let parsed = try? JSONValue(parsing: Array(event.data.utf8)), case .object(let json) = parsed else {
            return true
        }
        switch event.type {
        case "snapshot":
            guard case .int(let rev)? = json["rev"], let stateJSON = json["state"] else { return true }
            if case .string(let schema)? = json["schema"], schema != system.schemaHash, predicting { stopPredicting() }
            follow(stateJSON, rev: UInt64(rev), id: event.id)
            last = json
        case "patch":
            guard case .int(let base)? = json["base"], case .int(let rev)? = json["rev"], let ops = json["ops"],
                let current = streamJSON, UInt64(base) == streamRev,
                let patch = try? JSONPatch(json: ops), let next = try? patch.apply(to: current)
            else {
                // Not the revision this store has: start over with a snapshot.
                cursor = nil
                return false
            }
            follow(next, rev: UInt64(rev), id: event.id)
            last = json
        case "moved":
            failures = 0
            return false
        case "reauth":
            // The token expired or was revoked: nothing more is read or posted until `setToken`.
            connection = .needsToken
            return false
        case "ended":
            close()
            return false
        default:
            break
        }
        return true
    }

    private func follow(_ stateJSON: JSONValue, rev: UInt64, id: String?) {
        streamJSON = stateJSON
        streamRev = rev
        if let id { cursor = id }
    }

    /// The stream's value as the confirmed state; `json` is the last event's (its `clients`).
    private func confirmStreamState(_ json: [String: JSONValue]) {
        failures = 0
        if connection != .live && connection != .needsToken && !closed { connection = .live }
        guard let stateJSON = streamJSON, let rev = streamRev,
            let newState = try? stateJSON.decode(System.State.self)
        else { return }
        confirm(newState, rev: rev, included: Self.included(json, clientID))
        pump()
    }

    private func reconnect(after reader: EventStreamReader) async {
        guard !closed, self.reader === reader, connection != .needsToken else { return }
        let delay = failures == 0 ? Duration.milliseconds(Int.random(in: 20...120)) : backoff()
        if failures > 0 { connection = .offline(retryingIn: delay) }
        failures += 1
        try? await Task.sleep(for: delay)
        guard !closed, self.reader === reader else { return }
        streamJSON = nil
        streamRev = nil
        openStream()
    }
}
