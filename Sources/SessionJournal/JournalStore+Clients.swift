/// Reading back each client's last numbered post (`clients`, schema version 9).
///
/// Concurrency: runs on the journal's writer queue like every other use of the store.
extension JournalStore {
    /// Gives each of `sessions` (through `index`, session id to position) its clients' rows. A row that fails its
    /// checksum, or that shows a revision past what recovery kept, is dropped: the client then meets a gap (409)
    /// and starts again from the session's state.
    func recoverClients(
        into sessions: inout [RecoveredSession],
        index: [String: Int],
        problems: inout [String]
    ) throws(JournalError) {
        let read = try connection.prepare(JournalSchema.readClients)
        defer { read.finalize() }
        var failed: [String: Int] = [:]
        while try read.step() {
            let record = Self.clientSequence(from: read)
            guard let position = index[record.sessionID] else { continue }
            guard RecordChecksum.sequence(record) == read.int64(7) else {
                failed[record.sessionID, default: 0] += 1
                continue
            }
            guard record.revision <= sessions[position].revision else { continue }
            sessions[position].clients.append(record)
        }
        for (id, count) in failed.sorted(by: { $0.key < $1.key }) {
            problems.append("session \(id): \(count) client sequences fail their checksum; dropped")
        }
    }

    /// Gives one session its clients' rows (as `recoverClients(into:index:problems:)`).
    func recoverClients(of session: inout RecoveredSession, problems: inout [String]) throws(JournalError) {
        let read = try connection.prepare(JournalSchema.readSessionClients)
        defer { read.finalize() }
        read.bind(1, session.creation.id)
        var failed = 0
        while try read.step() {
            let record = Self.clientSequence(from: read)
            guard RecordChecksum.sequence(record) == read.int64(7) else {
                failed += 1
                continue
            }
            guard record.revision <= session.revision else { continue }
            session.clients.append(record)
        }
        if failed > 0 {
            problems.append("session \(session.creation.id): \(failed) client sequences fail their checksum; dropped")
        }
    }

    /// Columns: session, client, seq, epoch, rev, status, answer, crc.
    private static func clientSequence(from row: SQLiteStatement) -> ClientSequence {
        ClientSequence(
            sessionID: row.text(0),
            client: row.text(1),
            sequence: UInt64(bitPattern: row.int64(2)),
            epoch: UInt64(bitPattern: row.int64(3)),
            revision: UInt64(bitPattern: row.int64(4)),
            status: Int(row.int64(5)),
            answer: row.text(6)
        )
    }
}
