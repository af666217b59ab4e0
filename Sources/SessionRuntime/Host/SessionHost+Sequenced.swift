import CoreMetrics
import FeedbackJSON

/// Numbered posts (issue 34, exact reconciliation): `Client-ID` and `Client-Sequence` make a post at most once per
/// (session, client, number), with the client's last number journaled with the post's events.
extension SessionHost {
    /// Whether a refusal is for good (the same post would be refused again): then it uses up its number.
    static func isPermanent(_ error: APIError) -> Bool {
        switch error.status {
        case 400, 403, 405, 412, 413, 415, 422: true
        default: false
        }
    }

    /// Posts `events` as the client's post `stamp`: the next number is applied once, the last number again gets its
    /// first answer (applied or refused), a number past the next is 409 `sequence-gap`, one before the last 409
    /// `sequence-superseded`. A permanent refusal is journaled as the number's answer; a passing one (busy,
    /// passivated, the journal) leaves the number free for the retry.
    package func postSequenced(
        _ events: PostedEvents,
        to session: any HostedSession,
        ifMatch: String?,
        stamp: ClientStamp,
        completion: @escaping @Sendable (Result<SessionSnapshot, APIError>) -> Void
    ) {
        if let refusal = persistence?.writeRefusal() { return completion(.failure(refusal)) }
        let count = events.count
        let eventsApplied = metrics.eventsApplied
        switch session.beginSequenced(stamp, remembering: limits.clientsPerSession) {
        case .replay(.applied(let snapshot)):
            session.answerOnceJournaled(.success(snapshot), completion)
        case .replay(.refused(let refusal)):
            session.whenJournaled { problem in completion(.failure(problem ?? refusal)) }
        case .inFlight:
            completion(
                .failure(
                    APIError(
                        .sequenceInFlight,
                        "post \(stamp.sequence) of client \(stamp.client) is still being applied; retry when it has "
                            + "been answered",
                        retryAfter: 1,
                        extra: Self.extra(stamp)
                    )
                )
            )
        case .gap(let expected):
            completion(
                .failure(
                    APIError(
                        .sequenceGap,
                        "client \(stamp.client) sent post \(stamp.sequence), but the session expects post \(expected) "
                            + "next: send \(expected) (and the posts after it) in order",
                        extra: Self.extra(stamp).merging(["expectedSequence": .int(Int64(expected))]) { $1 }
                    )
                )
            )
        case .unknown:
            completion(.failure(Self.unknownClient(stamp, remembering: limits.clientsPerSession)))
        case .superseded(let last):
            completion(
                .failure(
                    APIError(
                        .sequenceSuperseded,
                        "post \(stamp.sequence) of client \(stamp.client) was answered before, and the session has "
                            + "taken its post \(last) since; only the last post's answer is kept. Its effect is in "
                            + "the session's state: GET it",
                        extra: Self.extra(stamp).merging(["last": .int(Int64(last))]) { $1 }
                    )
                )
            )
        case .proceed:
            session.postSequenced(events, ifMatch: ifMatch, stamp: stamp) { result in
                switch result {
                case .success(let snapshot):
                    session.withClientLedger { $0.complete(stamp, .applied(snapshot)) }
                    eventsApplied.increment(by: count)
                    session.answerOnceJournaled(result, completion)
                case .failure(let error) where Self.isPermanent(error):
                    let refusal = Self.refused(error, stamp)
                    session.withClientLedger { $0.complete(stamp, .refused(refusal)) }
                    session.journalRefusal(stamp, refusal)
                    session.whenJournaled { problem in completion(.failure(problem ?? refusal)) }
                case .failure:
                    session.withClientLedger { $0.abandon(stamp) }
                    completion(result)
                }
            }
        }
    }

    /// A refusal that came before the events reached the session (the body's shape): for good, so the number is used
    /// up as if the session had refused it.
    package func refuseSequenced(
        _ error: APIError,
        to session: any HostedSession,
        stamp: ClientStamp,
        completion: @escaping @Sendable (Result<SessionSnapshot, APIError>) -> Void
    ) {
        guard Self.isPermanent(error) else { return completion(.failure(error)) }
        switch session.beginSequenced(stamp, remembering: limits.clientsPerSession) {
        case .proceed:
            let refusal = Self.refused(error, stamp)
            session.withClientLedger { $0.complete(stamp, .refused(refusal)) }
            session.journalRefusal(stamp, refusal)
            session.whenJournaled { problem in completion(.failure(problem ?? refusal)) }
        default:
            // Not the next number: what the number itself says (replay, gap, ...) is the answer.
            postSequenced([], to: session, ifMatch: nil, stamp: stamp, completion: completion)
        }
    }

    /// A number past 1 from a client the session does not remember: whether its earlier posts were applied cannot be
    /// told, so it is not guessed. The client reads the state and starts again at 1.
    static func unknownClient(_ stamp: ClientStamp, remembering capacity: Int) -> APIError {
        APIError(
            .clientUnknown,
            "client \(stamp.client) sent post \(stamp.sequence), but this session does not know the client: it never "
                + "posted here, or it was forgotten (a session remembers the \(capacity) clients that posted most "
                + "recently, session.clients.max). Whether its posts before \(stamp.sequence) were applied cannot be "
                + "told from here: GET the session's state, then send again from Client-Sequence 1",
            extra: extra(stamp).merging(["expectedSequence": .int(1)]) { $1 }
        )
    }

    private static func extra(_ stamp: ClientStamp) -> [String: JSONValue] {
        ["client": .string(stamp.client), "sequence": .int(Int64(stamp.sequence))]
    }

    /// The refusal with the number it used up.
    static func refused(_ error: APIError, _ stamp: ClientStamp) -> APIError {
        APIError(
            error.code,
            error.message + " (post \(stamp.sequence) of client \(stamp.client) is used up: send the next one as "
                + "\(stamp.sequence + 1))",
            retryAfter: error.retryAfter,
            extra: error.extra.merging(extra(stamp).merging(["refusedSequence": .int(Int64(stamp.sequence))]) { $1 }) {
                $1
            }
        )
    }
}
