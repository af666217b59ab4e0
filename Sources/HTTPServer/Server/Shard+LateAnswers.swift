import Dispatch

extension Shard {
    /// Writes answers that came after their handler returned (see `LateAnswers`), each only if its connection is
    /// still the one that asked; on the shard's queue.
    func deliver(_ answers: [LateAnswers.Answer]) {
        dispatchPrecondition(condition: .onQueue(queue))
        now = DispatchTimeNow.nanoseconds()
        for answer in answers {
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
