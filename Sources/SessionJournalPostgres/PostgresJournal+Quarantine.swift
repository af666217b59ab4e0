public import SessionJournal
import Synchronization

/// Quarantine in the shared database (`fh_quarantine`): what one replica records, every replica reads.
///
/// Concurrency: called from any thread but the journal's queue; each call waits for its turn there (`query`) and
/// returns after its transaction committed.
extension PostgresJournal {
    /// Records (or replaces) session `id`'s quarantine and lets the session go, whoever owned it (`fh_quarantine`): a
    /// replica holding it in memory is fenced at its next write and finds the quarantine when it reads it back.
    public func quarantine(_ id: String, reason: String, at time: Int64) throws(JournalError) {
        let statement = PostgresConnection.Statement(
            name: "quarantine",
            parameters: [id, reason, String(time), Quarantine.hostName]
        )
        _ = try query([statement])
        // Let go here too: this replica's copy, if any, is read back at its next use.
        state.withLock { state in state.owners[id] = nil }
    }

    public func releaseQuarantine(_ id: String) throws(JournalError) -> Bool {
        try query([.init(name: "quarantine.release", parameters: [id])])[0].affected > 0
    }

    public func quarantine(of id: String) throws(JournalError) -> Quarantine? {
        try query([.init(name: "quarantine.read", parameters: [id])])[0].rows.lazy.compactMap(Self.quarantine).first
    }

    public func quarantined(limit: Int) throws(JournalError) -> [Quarantine] {
        let rows = try query([.init(name: "quarantine.list", parameters: [String(max(limit, 0))])])[0].rows
        return rows.compactMap(Self.quarantine)
    }

    /// Columns: session, reason, at, replica.
    private static func quarantine(from row: [String?]) -> Quarantine? {
        guard row.count == 4, let id = row[0], let reason = row[1], let at = row[2].flatMap({ Int64($0) }) else {
            return nil
        }
        return Quarantine(sessionID: id, reason: reason, at: at, replica: row[3])
    }
}
