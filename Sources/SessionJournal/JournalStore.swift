internal import CSQLite

/// The writer connection and its prepared statements: writes a batch of records in one transaction.
///
/// Concurrency: owned by `SessionJournal`'s writer queue; every method runs there (or, before the journal
/// exists, on the thread that opens it). Nothing here is shared.
final class JournalStore {
    let connection: SQLiteConnection
    private let insertSession: SQLiteStatement
    private let insertEvent: SQLiteStatement
    private let upsertSnapshot: SQLiteStatement
    private let deleteEventsThrough: SQLiteStatement
    private let deleteEvents: SQLiteStatement
    private let deleteSnapshot: SQLiteStatement
    private let deleteSession: SQLiteStatement
    private let begin: SQLiteStatement
    private let commitStatement: SQLiteStatement
    /// Commits since the last sync (interval policy).
    private(set) var unsyncedCommits = 0
    var statistics = JournalStatistics()

    /// Opens the journal file whose integrity `JournalOpener` established, in WAL mode with `configuration`.
    init(connection: SQLiteConnection, configuration: JournalConfiguration) throws(JournalError) {
        self.connection = connection
        let synchronous =
            switch configuration.fsync {
            case .perCommit: "FULL"
            case .interval: "NORMAL"
            }
        try connection.execute(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = \(synchronous);
            PRAGMA wal_autocheckpoint = \(configuration.autoCheckpointPages);
            PRAGMA foreign_keys = OFF;
            """
        )
        let mode = try connection.texts("PRAGMA journal_mode").first
        guard mode == "wal" else {
            throw JournalError(.sqlite, "\(connection.path): WAL mode refused (journal_mode=\(mode ?? "?"))")
        }
        try connection.execute(JournalSchema.create)
        insertSession = try connection.prepare(JournalSchema.insertSession)
        insertEvent = try connection.prepare(JournalSchema.insertEvent)
        upsertSnapshot = try connection.prepare(JournalSchema.upsertSnapshot)
        deleteEventsThrough = try connection.prepare(JournalSchema.deleteEventsThrough)
        deleteEvents = try connection.prepare(JournalSchema.deleteEvents)
        deleteSnapshot = try connection.prepare(JournalSchema.deleteSnapshot)
        deleteSession = try connection.prepare(JournalSchema.deleteSession)
        begin = try connection.prepare("BEGIN IMMEDIATE")
        commitStatement = try connection.prepare("COMMIT")
    }

    /// Writes `records` in one transaction; on any failure the transaction is rolled back and nothing is kept.
    func commit(_ records: [JournalRecord]) -> Result<Void, JournalError> {
        do {
            try begin.run()
            for record in records {
                try write(record)
            }
            try commitStatement.run()
        } catch {
            try? connection.execute("ROLLBACK")
            statistics.failedCommits += 1
            return .failure(error)
        }
        unsyncedCommits += 1
        statistics.commits += 1
        statistics.records += records.count
        return .success(())
    }

    private func write(_ record: JournalRecord) throws(JournalError) {
        switch record {
        case .created(let creation):
            try deleteSessionRows(creation.id, keepingSession: true)
            insertSession.bind(1, creation.id)
            insertSession.bind(2, creation.system)
            insertSession.bind(3, Int64(bitPattern: creation.epoch))
            insertSession.bind(4, creation.state)
            insertSession.bind(5, creation.createdAt)
            insertSession.bind(6, RecordChecksum.creation(creation))
            try insertSession.run()
        case .event(let id, let revision, let event, let origin):
            insertEvent.bind(1, id)
            insertEvent.bind(2, Int64(bitPattern: revision))
            insertEvent.bind(3, Int64(origin.rawValue))
            insertEvent.bind(4, event)
            insertEvent.bind(5, RecordChecksum.of(id, RecordChecksum.eventNumber(revision, origin.rawValue), event))
            try insertEvent.run()
        case .snapshot(let id, let revision, let state):
            upsertSnapshot.bind(1, id)
            upsertSnapshot.bind(2, Int64(bitPattern: revision))
            upsertSnapshot.bind(3, state)
            upsertSnapshot.bind(4, RecordChecksum.of(id, revision, state))
            try upsertSnapshot.run()
            deleteEventsThrough.bind(1, id)
            deleteEventsThrough.bind(2, Int64(bitPattern: revision))
            try deleteEventsThrough.run()
        case .removed(let id):
            try deleteSessionRows(id, keepingSession: false)
        }
    }

    private func deleteSessionRows(_ id: String, keepingSession: Bool) throws(JournalError) {
        deleteEvents.bind(1, id)
        try deleteEvents.run()
        deleteSnapshot.bind(1, id)
        try deleteSnapshot.run()
        if !keepingSession {
            deleteSession.bind(1, id)
            try deleteSession.run()
        }
    }

    /// Forces committed writes to stable storage: a passive checkpoint syncs the WAL first (synchronous=NORMAL
    /// syncs at checkpoints), then copies what it can into the database file.
    func sync() throws(JournalError) {
        guard unsyncedCommits > 0 else { return }
        try connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
        unsyncedCommits = 0
        statistics.syncs += 1
    }

    /// Finalizes every statement and closes the connection (which checkpoints and removes the WAL file).
    func close() {
        for statement in [
            insertSession, insertEvent, upsertSnapshot, deleteEventsThrough, deleteEvents, deleteSnapshot,
            deleteSession, begin, commitStatement,
        ] {
            statement.finalize()
        }
        connection.close()
    }
}

/// Counters of the journal's work since it was opened.
public struct JournalStatistics: Sendable, Equatable {
    /// Transactions committed (each holds every append that was waiting when it began).
    public var commits = 0
    /// Transactions rolled back after an error.
    public var failedCommits = 0
    /// Records written.
    public var records = 0
    /// Explicit syncs by the interval policy.
    public var syncs = 0
}

extension RecordChecksum {
    static func creation(_ creation: SessionCreation) -> Int64 {
        of(creation.id, creation.epoch, creation.system, creation.state)
    }
}
