import Dispatch

extension Shard {
    /// Writes answers that came after their handler returned (see `LateAnswers`), each only if its connection is
    /// still the one that asked; on the shard's queue.
    func deliver(_ answers: [LateAnswers.Answer]) {
        dispatchPrecondition(condition: .onQueue(queue))
        now = DispatchTimeNow.nanoseconds()
        for answer in answers {
            guard Int(answer.fd) < connections.count, let connection = connections[Int(answer.fd)],
                connection.id == answer.connectionID
            else { continue }
            respond(answer.response, to: answer.head, on: connection)
            serve(connection)
        }
    }
}
