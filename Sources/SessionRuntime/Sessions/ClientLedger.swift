import FeedbackJSON
public import SessionJournal

/// Each client's numbered posts to one session (issue 34): the last sequence number and the answer it got, so that
/// a repeated number gets the same answer again, a number past the next one is a gap, and a permanent refusal still
/// counts; and, for the streams, which client's posts each revision includes (`marks(at:)`).
///
/// Bounded: a new client admitted when `remembering` clients are known (`session.clients.max`, which the host passes
/// to `begin`) makes the ledger forget the least recently active ones (by their last new number; a client with a post in flight is never forgotten). A client the ledger
/// does not know may start at number 1; a later number from it is `.unknown` (it was forgotten, or never posted
/// here), which the API answers with 409 `client-unknown` (docs/API.md, "Numbered posts").
///
/// Not thread-safe: the session that owns it guards it with its own lock.
public struct ClientLedger: Sendable {
    /// What a client's post was answered.
    public enum Answer: Sendable, Equatable {
        /// Applied: the snapshot after its events.
        case applied(SessionSnapshot)
        /// Refused for good (a 4xx that a retry would get again); the number is used up.
        case refused(APIError)
    }

    /// What a numbered post should do.
    public enum Decision: Sendable, Equatable {
        /// The next number: apply it, then `complete` (or `abandon` when it failed for a passing reason).
        case proceed
        /// The client's last number again: its answer.
        case replay(Answer)
        /// The number is being applied now.
        case inFlight
        /// A number past the next: `expected` is the next one.
        case gap(expected: UInt64)
        /// A number before the last one: it was answered, and only the last answer is kept.
        case superseded(last: UInt64)
        /// A number past 1 from a client the ledger does not know (forgotten, or never seen).
        case unknown
    }

    private struct Entry: Sendable {
        var last: UInt64 = 0
        var answer: Answer?
        var inFlight: UInt64?
        /// When the client last began a new number (the ledger's `clock`): the least recent is forgotten first.
        var used: UInt64 = 0
    }

    private var entries: [String: Entry] = [:]
    /// Counts the new numbers begun: each entry's `used`.
    private var clock: UInt64 = 0
    /// Clients forgotten and not yet taken by `takeForgotten()` (for the journal).
    private var forgotten: [String] = []
    /// The last applied number of each client, and its encoding at the revisions it changed (newest last).
    private var applied: [String: UInt64] = [:]
    private var marks: [(rev: UInt64, encoded: [UInt8])] = []
    /// Marks kept for states that reach a stream late (a stream's states lag the loop by a hop at most).
    static let markCapacity = 64

    /// An empty ledger.
    public init() {}

    /// The number of clients known.
    public var count: Int { entries.count }

    /// Decides what the post `stamp` does; on `.proceed` the number is in flight. A new client past `remembering`
    /// known ones makes the ledger forget the least recently active (`takeForgotten()` says which).
    public mutating func begin(_ stamp: ClientStamp, remembering capacity: Int) -> Decision {
        guard var entry = entries[stamp.client] else {
            guard stamp.sequence == 1 else { return .unknown }
            clock += 1
            entries[stamp.client] = Entry(inFlight: 1, used: clock)
            forgetLeastRecent(keeping: max(capacity, 1), sparing: stamp.client)
            return .proceed
        }
        if let flying = entry.inFlight {
            return stamp.sequence == flying ? .inFlight : .gap(expected: flying + 1)
        }
        if stamp.sequence == entry.last, let answer = entry.answer { return .replay(answer) }
        if stamp.sequence <= entry.last { return .superseded(last: entry.last) }
        guard stamp.sequence == entry.last + 1 else { return .gap(expected: entry.last + 1) }
        clock += 1
        entry.inFlight = stamp.sequence
        entry.used = clock
        entries[stamp.client] = entry
        return .proceed
    }

    /// The clients forgotten since the last call, whose journal rows must go (`JournalRecord.clientForgotten`).
    public mutating func takeForgotten() -> [String] {
        defer { forgotten = [] }
        return forgotten
    }

    /// Forgets the least recently active clients (none with a post in flight, nor `spared`) until `capacity` are
    /// left. Only when a new client comes to a full ledger.
    private mutating func forgetLeastRecent(keeping capacity: Int, sparing spared: String) {
        // One at a time: a full ledger forgets one client per new one (a lowered setting, more once).
        while entries.count > capacity {
            guard
                let oldest = entries.lazy.filter({ $0.value.inFlight == nil && $0.key != spared })
                    .min(by: { $0.value.used < $1.value.used })?.key
            else { return }
            entries[oldest] = nil
            applied[oldest] = nil
            forgotten.append(oldest)
        }
    }

    /// Records the answer of the number `begin` let proceed.
    public mutating func complete(_ stamp: ClientStamp, _ answer: Answer) {
        guard var entry = entries[stamp.client], entry.inFlight == stamp.sequence else { return }
        entry.last = stamp.sequence
        entry.answer = answer
        entry.inFlight = nil
        entries[stamp.client] = entry
    }

    /// Forgets a number whose post failed for a passing reason (busy, passivated, the journal), so that its retry
    /// applies it.
    public mutating func abandon(_ stamp: ClientStamp) {
        guard entries[stamp.client]?.inFlight == stamp.sequence else { return }
        entries[stamp.client]?.inFlight = nil
        if entries[stamp.client]?.last == 0 { entries[stamp.client] = nil }
    }

    /// Notes that revision `rev` includes the post `stamp`; called in revision order, before any stream frames it.
    public mutating func mark(_ stamp: ClientStamp, at rev: UInt64) {
        applied[stamp.client] = max(applied[stamp.client] ?? 0, stamp.sequence)
        if marks.last?.rev == rev { marks.removeLast() }
        if marks.count == Self.markCapacity { marks.removeFirst() }
        marks.append((rev, Self.encode(applied)))
    }

    /// `{"client": last sequence, …}` of the clients whose posts revision `rev` includes; nil when none does, or
    /// `rev` is older than the marks kept.
    public func marks(at rev: UInt64) -> [UInt8]? {
        guard let index = marks.lastIndex(where: { $0.rev <= rev }) else { return nil }
        return marks[index].encoded
    }

    /// Takes what the journal kept (`RecoveredSession.clients`) for a session restored at `revision`.
    public mutating func restore(_ records: [ClientSequence], revision: UInt64) {
        // Recency by revision: a ledger kept with more clients than are remembered now (the setting was lowered)
        // forgets the least recent when the next new client comes.
        for record in records.sorted(by: { ($0.revision, $0.sequence) < ($1.revision, $1.sequence) }) {
            let answer: Answer
            if record.status == 200 {
                answer = .applied(
                    SessionSnapshot(
                        cursor: Cursor(epoch: record.epoch, rev: record.revision),
                        state: Array(record.answer.utf8)
                    )
                )
                applied[record.client] = record.sequence
            } else {
                answer = .refused(Self.refusal(from: record.answer))
            }
            clock += 1
            entries[record.client] = Entry(last: record.sequence, answer: answer, inFlight: nil, used: clock)
        }
        if !applied.isEmpty { marks = [(revision, Self.encode(applied))] }
    }

    /// The journal's record of `answer` to `stamp` in session `id`.
    public static func record(
        _ stamp: ClientStamp,
        _ answer: Answer,
        session id: String,
        epoch: UInt64,
        revision: UInt64
    )
        -> ClientSequence
    {
        switch answer {
        case .applied(let snapshot):
            ClientSequence(
                sessionID: id,
                client: stamp.client,
                sequence: stamp.sequence,
                epoch: snapshot.cursor.epoch,
                revision: snapshot.rev,
                status: 200,
                answer: String(decoding: snapshot.state, as: UTF8.self)
            )
        case .refused(let error):
            ClientSequence(
                sessionID: id,
                client: stamp.client,
                sequence: stamp.sequence,
                epoch: epoch,
                revision: revision,
                status: error.status,
                answer: String(
                    decoding: JSONValue.object([
                        "code": .string(error.code.rawValue), "detail": .string(error.message),
                        "extra": .object(error.extra),
                    ]).serialized(),
                    as: UTF8.self
                )
            )
        }
    }

    private static func refusal(from text: String) -> APIError {
        guard case .object(let members)? = try? JSONValue(parsing: Array(text.utf8)),
            case .string(let raw)? = members["code"], let code = APIError.Code(rawValue: raw),
            case .string(let detail)? = members["detail"]
        else { return APIError(.invalidEvent, "this post was refused") }
        if case .object(let extra)? = members["extra"] { return APIError(code, detail, extra: extra) }
        return APIError(code, detail)
    }

    private static func encode(_ applied: [String: UInt64]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (index, (client, sequence)) in applied.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            // Client ids are A-Za-z0-9_- (ClientStamp.parse): no escaping needed.
            out.append(contentsOf: "\"\(client)\":\(sequence)".utf8)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
