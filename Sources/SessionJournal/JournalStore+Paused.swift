/// Forks' paused effects (issue 32): the `paused` table, read back with each session.
extension JournalStore {
    /// Marks each of `sessions` whose effects are paused (`JournalRecord.paused`), by key.
    func recoverPaused(into sessions: inout [RecoveredSession]) throws(JournalError) {
        let read = try connection.prepare(JournalSchema.readPaused)
        defer { read.finalize() }
        for index in sessions.indices {
            read.reset()
            read.bind(1, sessions[index].creation.id)
            sessions[index].effectsPaused = try read.step()
        }
    }
}
