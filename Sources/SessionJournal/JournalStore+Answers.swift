/// The schema version, the journal's fingerprint key, and the keyed answers: reading them back and trimming them.
///
/// Concurrency: runs on the journal's writer queue like every other use of the store (or, before the journal
/// exists, on the thread that opens it).
extension JournalStore {
    /// Brings the file to `JournalSchema.version` in one transaction: creates a new file's tables, adds what a version
    /// 2 to 7 file lacks (their rows become rows of systems' version 1); refuses any other version. Then makes sure the
    /// file has a fingerprint key.
    static func migrate(_ connection: SQLiteConnection) throws(JournalError) {
        let found = try connection.integer("PRAGMA user_version")
        guard JournalSchema.readable.contains(found) else {
            throw JournalError(
                .sqlite,
                "\(connection.path) has schema version \(found); this build opens versions 2 to "
                    + "\(JournalSchema.version): move it aside"
            )
        }
        try connection.execute("BEGIN IMMEDIATE")
        do throws(JournalError) {
            if found != JournalSchema.version {
                try connection.execute(JournalSchema.create)
                // Rows of older files were written by systems at their version 1.
                if found < JournalSchema.versionsAdded { try connection.execute(JournalSchema.addVersions) }
                if found < JournalSchema.feedbackAdded {
                    // Each column once: a file may hold some already (a version written by a test, or by hand).
                    for (table, column, type) in JournalSchema.feedbackColumns
                    where !(try connection.texts("SELECT name FROM pragma_table_info('\(table)')")).contains(column) {
                        try connection.execute("ALTER TABLE \(table) ADD COLUMN \(column) \(type)")
                    }
                }
                try connection.execute("PRAGMA user_version = \(JournalSchema.version)")
            }
            try connection.execute(JournalSchema.createPaused)
            let insert = try connection.prepare(JournalSchema.insertMetaIfMissing)
            defer { insert.finalize() }
            insert.bind(1, JournalSchema.fingerprintKeyName)
            insert.bind(2, Hex.encode(Hex.randomKey()))
            try insert.run()
            try adoptKeyedFingerprints(connection)
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The 16-byte key of the journal's fingerprints, made when the file was created (or migrated) and kept in
    /// `meta`; read after salvage, which copies the damaged file's key over the fresh one.
    func fingerprintKey() throws(JournalError) -> [UInt8] {
        let read = try connection.prepare(JournalSchema.readMeta)
        defer { read.finalize() }
        read.bind(1, JournalSchema.fingerprintKeyName)
        guard try read.step(), let key = Hex.decode(read.text(0)), key.count == 16 else {
            throw JournalError(.sqlite, "\(connection.path): the fingerprint key in meta is missing or damaged")
        }
        return key
    }

    /// Reads every keyed answer into its live session (through `index`, session id to position), oldest first,
    /// keeping the last `answersPerSession` of each. An answer that fails its checksum, or that shows a revision
    /// past what recovery kept (its events were lost to damage), is dropped: a retry then applies again, which
    /// is right since the state no longer holds its events. Also counts each session's rows for trimming.
    func recoverAnswers(
        into sessions: inout [RecoveredSession],
        index: [String: Int],
        problems: inout [String]
    ) throws(JournalError) {
        let read = try connection.prepare(JournalSchema.readAnswers)
        defer { read.finalize() }
        answerCounts = [:]
        var failed: [String: Int] = [:]
        while try read.step() {
            let answer = Self.answer(from: read)
            answerCounts[answer.sessionID, default: 0] += 1
            guard let position = index[answer.sessionID] else { continue }  // its session is gone: compaction's
            guard RecordChecksum.answer(answer) == read.int64(6) else {
                failed[answer.sessionID, default: 0] += 1
                continue
            }
            guard answer.revision <= sessions[position].revision else { continue }
            sessions[position].answers.append(answer)
            if sessions[position].answers.count > answersPerSession {
                sessions[position].answers.removeFirst()
            }
        }
        for (id, count) in failed.sorted(by: { $0.key < $1.key }) {
            problems.append("session \(id): \(count) keyed answers fail their checksum; dropped")
        }
    }

    /// Columns: session, key, fingerprint, epoch, rev, state (then crc).
    private static func answer(from row: SQLiteStatement) -> KeyedAnswer {
        KeyedAnswer(
            sessionID: row.text(0),
            key: row.text(1),
            fingerprint: UInt64(bitPattern: row.int64(2)),
            epoch: UInt64(bitPattern: row.int64(3)),
            revision: UInt64(bitPattern: row.int64(4)),
            state: row.text(5)
        )
    }

    /// Marks the keyed answers journaled before fingerprints were swift-crypto's HMAC-SHA256 (an earlier build's
    /// SipHash, which no build computes now) as of unknown fingerprint, 0, which matches any body: their retries are
    /// answered again as before, and only a key reused with another body goes unnoticed for them. Once per file (the
    /// `meta` row `fingerprint.scheme` says it was done), inside the caller's transaction; an answer that fails its
    /// checksum is left for recovery to drop.
    static func adoptKeyedFingerprints(_ connection: SQLiteConnection) throws(JournalError) {
        let marked = try connection.prepare(JournalSchema.readMeta)
        marked.bind(1, JournalSchema.fingerprintSchemeName)
        let done = try marked.step()
        marked.finalize()
        guard !done else { return }
        var rewritten: [(seq: Int64, crc: Int64)] = []
        let read = try connection.prepare(
            "SELECT session, key, fingerprint, epoch, rev, state, crc, seq FROM answers WHERE fingerprint <> 0"
        )
        while try read.step() {
            var answer = Self.answer(from: read)
            guard RecordChecksum.answer(answer) == read.int64(6) else { continue }
            answer.fingerprint = 0
            rewritten.append((read.int64(7), RecordChecksum.answer(answer)))
        }
        read.finalize()
        let update = try connection.prepare("UPDATE answers SET fingerprint = 0, crc = ?1 WHERE seq = ?2")
        defer { update.finalize() }
        for row in rewritten {
            update.bind(1, row.crc)
            update.bind(2, row.seq)
            try update.run()
        }
        let mark = try connection.prepare(JournalSchema.insertMetaIfMissing)
        defer { mark.finalize() }
        mark.bind(1, JournalSchema.fingerprintSchemeName)
        mark.bind(2, JournalSchema.fingerprintScheme)
        try mark.run()
    }

    /// One session's answers, as `recoverAnswers(into:index:problems:)` gives them to every session.
    func recoverAnswers(of session: inout RecoveredSession, problems: inout [String]) throws(JournalError) {
        let read = try connection.prepare(JournalSchema.readSessionAnswers)
        defer { read.finalize() }
        read.bind(1, session.creation.id)
        var count = 0
        var failed = 0
        while try read.step() {
            let answer = Self.answer(from: read)
            count += 1
            guard RecordChecksum.answer(answer) == read.int64(6) else {
                failed += 1
                continue
            }
            guard answer.revision <= session.revision else { continue }
            session.answers.append(answer)
            if session.answers.count > answersPerSession { session.answers.removeFirst() }
        }
        answerCounts[session.creation.id] = count
        if failed > 0 {
            problems.append("session \(session.creation.id): \(failed) keyed answers fail their checksum; dropped")
        }
    }

    /// Deletes the answers of sessions that are gone and all but the last `answersPerSession` of the others.
    /// Returns the number deleted.
    func compactAnswers() throws(JournalError) -> Int {
        let statement = try connection.prepare(JournalSchema.compactAnswers)
        defer { statement.finalize() }
        statement.bind(1, Int64(answersPerSession))
        try statement.run()
        let deleted = Int(try connection.integer("SELECT changes()"))
        for (id, count) in answerCounts where count > answersPerSession {
            answerCounts[id] = answersPerSession
        }
        return deleted
    }
}

extension RecordChecksum {
    package static func answer(_ answer: KeyedAnswer) -> Int64 {
        var sum = RecordChecksum()
        sum.add(answer.sessionID)
        sum.add(answer.revision)
        sum.add(answer.key)
        sum.add(answer.fingerprint)
        sum.add(answer.epoch)
        sum.add(answer.state)
        return sum.value
    }
}
