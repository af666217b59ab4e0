import SessionJournal

/// The keyed answers journaled before fingerprints were swift-crypto's HMAC-SHA256: marked unknown once per database.
extension PostgresJournal {
    /// Marks the keyed answers journaled before fingerprints were HMAC-SHA256 (an earlier build's SipHash) as of
    /// unknown fingerprint, 0, which matches any body, as `JournalStore.adoptKeyedFingerprints` does for SQLite: in
    /// one transaction with the `fh_meta` row `fingerprint.scheme`, which only the first replica of this build to open
    /// the database inserts (another opening at once waits for it on the row, then finds it). Replicas of an earlier
    /// build still running keep writing their fingerprints until they are replaced: a retry of theirs answered by
    /// this build is refused as another body (422) during the rolling upgrade, never applied twice.
    static func adoptKeyedFingerprints(_ connection: PostgresConnection) throws(JournalError) {
        try connection.execute("BEGIN")
        do throws(JournalError) {
            let marked = try connection.execute(
                "INSERT INTO fh_meta VALUES('\(JournalSchema.fingerprintSchemeName)', "
                    + "'\(JournalSchema.fingerprintScheme)') ON CONFLICT DO NOTHING RETURNING name"
            )
            if !marked.isEmpty {
                let rows = try connection.execute(
                    "SELECT session, key, fingerprint, epoch, rev, state, crc, seq FROM fh_answers "
                        + "WHERE fingerprint <> 0"
                )
                var updates: [String] = []
                for row in rows {
                    var answer = Self.answer(from: row)
                    guard RecordChecksum.answer(answer) == Int64(row[6] ?? ""), let seq = Int64(row[7] ?? "") else {
                        continue  // recovery drops it
                    }
                    answer.fingerprint = 0
                    updates.append(
                        "UPDATE fh_answers SET fingerprint = 0, crc = \(RecordChecksum.answer(answer)) WHERE seq = \(seq)"
                    )
                }
                var start = 0
                while start < updates.count {
                    let end = min(start + 500, updates.count)
                    try connection.execute(updates[start..<end].joined(separator: ";"))
                    start = end
                }
            }
            try connection.execute("COMMIT")
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }
}
