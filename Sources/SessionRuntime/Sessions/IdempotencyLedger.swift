/// Remembers the answers to one session's `Idempotency-Key` requests, so a retried POST applies nothing twice.
///
/// The same key with the same body gets the first answer again; with another body it is a conflict of content
/// (422); while the first request is still being answered, a retry is told to wait (409). Bodies are compared by
/// their fingerprint, a keyed 64-bit hash that the caller computes (`BodyFingerprinting`): with a journal the key is
/// the journal's, so answers restored after a restart (`remember`) still compare. A remembered fingerprint of 0 is
/// unknown (an answer an earlier build journaled with another hash) and matches any body: its retry is answered
/// again, as it was before. The ledger keeps the most recent `capacity` keys; the oldest are forgotten first.
///
/// Not thread-safe: the session that owns it guards it with its own lock.
public struct IdempotencyLedger<Answer: Sendable>: Sendable {
    /// What a request with a key should do.
    public enum Decision: Sendable {
        /// A new key: apply the request, then call `complete`.
        case proceed
        /// The same request was answered before: send this answer again.
        case replay(Answer)
        /// The same key is still being answered.
        case inFlight
        /// The same key came with another body.
        case mismatch
    }

    private enum Entry: Sendable {
        case inFlight(fingerprint: UInt64)
        case done(fingerprint: UInt64, answer: Answer)

        var fingerprint: UInt64 {
            switch self {
            case .inFlight(let fingerprint), .done(let fingerprint, _): fingerprint
            }
        }
    }

    private var entries: [String: Entry] = [:]
    private var order: [String] = []
    private var orderStart = 0
    /// How many keys are remembered.
    public let capacity: Int
    private let weigh: (@Sendable (Answer) -> Int)?
    /// What the answers kept weigh together, as `weigh` says (0 without it): the bytes a session's budget counts.
    public private(set) var weight = 0

    /// Creates an empty ledger remembering up to `capacity` keys; `weigh` tells what an answer weighs.
    public init(capacity: Int, weigh: (@Sendable (Answer) -> Int)? = nil) {
        precondition(capacity > 0, "an idempotency ledger remembers at least one key")
        self.capacity = capacity
        self.weigh = weigh
    }

    private func weight(of entry: Entry?) -> Int {
        guard let weigh, case .done(_, let answer)? = entry else { return 0 }
        return weigh(answer)
    }

    /// The number of keys remembered.
    public var count: Int { entries.count }

    /// Decides what a request with `key` and a body of `fingerprint` does; on `.proceed` the key is now in flight.
    public mutating func begin(key: String, fingerprint: UInt64) -> Decision {
        if let entry = entries[key] {
            guard entry.fingerprint == fingerprint || entry.fingerprint == 0 else { return .mismatch }
            switch entry {
            case .inFlight: return .inFlight
            case .done(_, let answer): return .replay(answer)
            }
        }
        add(key, .inFlight(fingerprint: fingerprint))
        return .proceed
    }

    /// Remembers an answer given before (one restored from the journal), as the newest key.
    public mutating func remember(key: String, fingerprint: UInt64, answer: Answer) {
        let entry = Entry.done(fingerprint: fingerprint, answer: answer)
        if entries[key] == nil {
            add(key, entry)
        } else {
            weight -= weight(of: entries[key])
            entries[key] = entry
        }
        weight += weight(of: entry)
    }

    private mutating func add(_ key: String, _ entry: Entry) {
        if entries.count >= capacity { evictOldest() }
        entries[key] = entry
        order.append(key)
    }

    /// Records the answer for a key that `begin` let proceed.
    public mutating func complete(key: String, answer: Answer) {
        guard let entry = entries[key] else { return }
        let done = Entry.done(fingerprint: entry.fingerprint, answer: answer)
        weight += weight(of: done) - weight(of: entry)
        entries[key] = done
    }

    /// Forgets a key whose request failed before it changed anything, so that a retry may apply it.
    public mutating func abandon(key: String) {
        guard case .inFlight = entries[key] else { return }
        entries[key] = nil
    }

    private mutating func evictOldest() {
        while orderStart < order.count {
            let key = order[orderStart]
            orderStart += 1
            if let removed = entries.removeValue(forKey: key) {
                weight -= weight(of: removed)
                break
            }
        }
        if orderStart > capacity {
            order.removeFirst(orderStart)
            orderStart = 0
        }
    }
}
