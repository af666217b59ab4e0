import Dispatch

/// Where a response that comes after its handler returned goes: the connection (by fd and id) on its shard. A value,
/// not a closure: a deferred answer costs no allocation for its way back.
struct LateDelivery: Sendable {
    let shard: Shard
    let fd: Int32
    let connectionID: UInt64

    init(shard: Shard, connection: Connection) {
        self.shard = shard
        self.fd = connection.fd
        self.connectionID = connection.id
    }

    /// Hops to the shard (its waiter thread), which answers only if the connection is still the one that asked.
    /// Answers arriving together share one hop (`LateAnswers`).
    func deliver(_ response: consuming Response) {
        if shard.lateAnswers.add(LateAnswers.Answer(fd: fd, connectionID: connectionID, response: consume response)) {
            shard.wakeWaiter()  // which delivers them on the shard's queue
        }
    }
}

extension Shard {
    /// Writes answers that came after their handler returned (see `LateAnswers`), each only if its connection is
    /// still the one that asked, and leaves `answers` empty, its room kept; on the shard's queue. Each answer is
    /// moved out of the list, not copied (a copy retained its body and fields only for the list to release them),
    /// from the last: the answers are for different connections (each waits for its own, reading nothing else
    /// meanwhile), so no order among them is owed, and reversing the list first copied every answer.
    func deliver(_ answers: inout [LateAnswers.Answer]) {
        dispatchPrecondition(condition: .onQueue(queue))
        now = DispatchTimeNow.nanoseconds()
        while let answer = answers.popLast() {
            // The request it answers is the one the connection waits on (`respondingTo`, set when its handler
            // returned without an answer): a connection reads no other request meanwhile.
            guard Int(answer.fd) < connections.count, let connection = connections[Int(answer.fd)],
                connection.id == answer.connectionID, let head = connection.respondingTo.take()
            else { continue }
            respond(answer.response, to: head, on: connection)
            serve(connection)
        }
    }
}
