import FeedbackJSON
import Foundation
import SystemKit

/// The outbox: the pending events go out one post at a time, in order, each with its number; a lost answer is
/// retried with the same number (the server answers it again instead of applying it twice). An event leaves the outbox
/// only when its post is answered: a stream event that shows it applied takes it out of the prediction, not out of
/// the outbox, since an answer can be lost with its connection and a server without a journal streams a state a
/// restart forgets.
extension RemoteStore {
    /// Starts the sender when there is something to send and it is not running.
    func pump() {
        guard sender == nil, !closed, connection != .needsToken, nextToSend() != nil else { return }
        sender = Task { [weak self] in
            await self?.sendAll()
            self?.sender = nil
            self?.pump()
        }
    }

    private func sendAll() async {
        while !closed, connection != .needsToken, let item = nextToSend() {
            let body: Data
            do {
                body = Data(try System.encodeEvent(item.event))
            } catch {
                lastRefusal = HostClientError(status: 0, message: "the event does not encode: \(error)")
                drop(item)
                renumber(from: item.sequence)
                predict()
                continue
            }
            let outcome: (Int, [String: JSONValue])
            do {
                outcome = try await host.send(
                    "POST",
                    "/v1/sessions/\(session)/events",
                    body: body,
                    headers: ["Client-ID": clientID, "Client-Sequence": String(item.sequence)]
                )
            } catch {
                // No answer: it may have been applied. The same number again gets its first answer.
                unanswered = item.sequence
                persist()
                await waitOffline()
                continue
            }
            if closed { return }
            handle(answer: outcome.1, status: outcome.0, for: item)
            // An answer that looked at the number: the post before it without an answer is settled either way.
            if unanswered == item.sequence, [200, 400, 409, 412, 413, 415, 422].contains(outcome.0) {
                unanswered = nil
            }
            if case .offline = connection { await waitOffline() }
        }
    }

    private func handle(answer json: [String: JSONValue], status: Int, for item: Pending) {
        switch status {
        case 200:
            answer(through: item.sequence)
            failures = 0
            if connection != .live, streamRev != nil { connection = .live }
            guard case .int(let rev)? = json["rev"], let stateJSON = json["state"],
                let newState = try? stateJSON.decode(System.State.self)
            else { return }
            confirm(newState, rev: UInt64(rev), included: Self.included(json, clientID) ?? item.sequence)
        case 401, 403:
            connection = .needsToken
        case 409 where FeedbackHost.problem(status, json).code == "client-unknown":
            startAsNewClient(refusing: item, json)
        case 409:
            if case .int(let expected)? = json["expectedSequence"] {
                let expected = UInt64(expected)
                if expected > item.sequence {
                    // The server has the numbers before `expected`: they were taken.
                    acknowledged = max(acknowledged, expected - 1)
                    answer(through: expected - 1)
                    pending.removeAll { $0.sequence < expected }
                } else {
                    // The server knows fewer numbers than this store sent (its record was lost): number again.
                    acknowledged = expected - 1
                    answered = expected - 1
                    renumber(from: expected)
                }
                predict()
            } else if case .int = json["last"] {
                // Answered before and superseded: it was applied.
                acknowledged = max(acknowledged, item.sequence)
                answer(through: item.sequence)
                pending.removeAll { $0.sequence <= item.sequence }
                predict()
            } else {
                connection = .offline(retryingIn: .milliseconds(100))
            }
        case 400, 412, 413, 415, 422:
            // Refused for good: the number is used up; this event goes, the others stay.
            lastRefusal = FeedbackHost.problem(status, json)
            acknowledged = max(acknowledged, item.sequence)
            answer(through: item.sequence)
            drop(item)
            predict()
        default:
            connection = .offline(retryingIn: backoff())
        }
    }

    /// The next event to post: the first one the server has not answered, shown by the stream or not.
    func nextToSend() -> Pending? {
        shownUnanswered.first { $0.sequence > answered } ?? pending.first { $0.sequence > answered }
    }

    /// The server answered the posts up to `sequence`: they are journaled, and leave the outbox.
    private func answer(through sequence: UInt64) {
        answered = max(answered, sequence)
        shownUnanswered.removeAll { $0.sequence <= answered }
    }

    private func drop(_ item: Pending) {
        pending.removeAll { $0.sequence == item.sequence }
        shownUnanswered.removeAll { $0.sequence == item.sequence }
    }

    /// The server does not know this store's client (it forgot it: it remembers the clients that posted most
    /// recently). The store goes on as a new client, numbering from 1 (the old id's numbers in stream events that are
    /// still on their way no longer count). An event sent before without an answer, or shown applied by the stream,
    /// may have been applied: it is dropped rather than risked twice, and `lastRefusal` says so.
    private func startAsNewClient(refusing item: Pending, _ json: [String: JSONValue]) {
        // The stream shows only posts that were sent, so what it showed is the post without an answer, if any.
        let uncertain = unanswered == item.sequence || shownUnanswered.contains { $0.sequence == item.sequence }
        shownUnanswered.removeAll()
        if uncertain {
            pending.removeAll { $0.sequence == item.sequence }
            lastRefusal = HostClientError(
                status: 409,
                code: "client-unknown",
                message: "the server forgot this store's client (\(clientID)) while its post \(item.sequence) had no "
                    + "answer: that event may or may not have been applied, and is not sent again"
            )
        }
        unanswered = nil
        clientID = Self.newClientID()
        acknowledged = 0
        answered = 0
        renumber(from: 1)
        predict()
    }

    /// Gives the events of the outbox after a dropped one numbers from `first` on, so the server sees no gap.
    private func renumber(from first: UInt64) {
        var number = first
        for index in shownUnanswered.indices where shownUnanswered[index].sequence >= first {
            shownUnanswered[index].sequence = number
            number += 1
        }
        for index in pending.indices where pending[index].sequence >= first {
            pending[index].sequence = number
            number += 1
        }
        nextSequence = number
    }

    private func waitOffline() async {
        let delay: Duration
        if case .offline(let retrying) = connection {
            delay = retrying
        } else {
            delay = backoff()
            connection = .offline(retryingIn: delay)
        }
        try? await Task.sleep(for: delay)
    }

    /// This client's number in an answer's or event's `clients`.
    static func included(_ json: [String: JSONValue], _ client: String) -> UInt64? {
        guard case .object(let clients)? = json["clients"], case .int(let number)? = clients[client] else { return nil }
        return UInt64(number)
    }
}
