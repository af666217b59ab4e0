import Synchronization

/// The way a deferred handler answers: call ``respond(_:)`` exactly once, from any thread, now or later.
///
/// An answer given before the handler returns is written inline on the shard queue, with no hop; a later one
/// hops to the connection's shard. A responder dropped without an answer sends 500, so a connection never hangs.
/// Thread-safe: its one piece of state sits under a `Mutex`.
public final class Responder: Sendable {
    enum Phase {
        /// The handler is still running on the shard queue.
        case inHandler
        /// Answered while the handler ran; the shard writes it when the handler returns.
        case answeredInline(Response)
        /// The handler returned without an answer; the answer will hop to the shard.
        case detached(LateDelivery)
        case done
    }

    private let phase = Mutex<Phase>(.inHandler)

    init() {}

    // The late delivery is taken out of the lock through a local.
    deinit {
        var late: LateDelivery?
        phase.withLock { phase in
            guard case .detached(let deliver) = phase else { return }
            phase = .done
            late = deliver
        }
        late?.deliver(.problem(status: 500, detail: "The handler ended without an answer."))
    }

    /// Sends the response. Calls after the first are ignored. Taken, not borrowed: a late answer goes on to its
    /// shard as it is, not copied (its body and fields retained once more) on the way.
    public func respond(_ response: consuming Response) {
        var late: LateDelivery?
        phase.withLock { phase in
            switch phase {
            case .inHandler:
                phase = .answeredInline(response)
            case .detached(let deliver):
                phase = .done
                late = deliver
            case .answeredInline, .done:
                break
            }
        }
        if let late { late.deliver(consume response) }
    }

    /// Called by the shard when the handler returns: the inline answer, or nil after arranging for the answer to go
    /// where `deliver` says.
    func handlerReturned(deliver: LateDelivery) -> Response? {
        phase.withLock { phase in
            switch phase {
            case .answeredInline(let response):
                phase = .done
                return response
            case .inHandler:
                phase = .detached(deliver)
                return nil
            case .detached, .done:
                return nil
            }
        }
    }
}
