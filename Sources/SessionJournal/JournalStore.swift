internal import CSQLite
import FeedbackJSON
import Foundation
import Glibc

/// The writer connection and its prepared statements: writes a batch of records in one transaction.
///
/// Concurrency: owned by `Journal`'s writer queue; every method runs there (or, before the journal
/// exists, on the thread that opens it). Nothing here is shared.
final class JournalStore {
    let connection: SQLiteConnection
    private let insertSession: SQLiteStatement
    private let eventRows: EventRows
    private let upsertSnapshot: SQLiteStatement
    private let deleteSnapshot: SQLiteStatement
    private let deleteSession: SQLiteStatement
    private let lastSeq: SQLiteStatement
    private let compactRange: SQLiteStatement
    private let cutoffs: CompactionCutoffs
    private let insertAnswer: SQLiteStatement
    private let deleteAnswers: SQLiteStatement
    private let trimAnswers: SQLiteStatement
    private let upsertDeadline: SQLiteStatement
    private let deleteDeadline: SQLiteStatement
    private let upsertSettled: SQLiteStatement
    private let deleteSettled: SQLiteStatement
    private let upsertActivity: SQLiteStatement
    private let deleteActivity: SQLiteStatement
    private let upsertHistory: SQLiteStatement
    private let trimHistory: SQLiteStatement
    private let deleteHistory: SQLiteStatement
    private let trimHistoryBefore: SQLiteStatement
    private let trimHistoryOlder: SQLiteStatement
    private let deleteTimeline: SQLiteStatement
    private let trimTimeline: SQLiteStatement
    private let stepEnd: SQLiteStatement
    private let deleteIndexedEvents: SQLiteStatement
    private let indexTimelineRange: SQLiteStatement
    private let writeTimelineThrough: SQLiteStatement
    private let oldestKept: SQLiteStatement
    private let systemOf: SQLiteStatement
    /// The retention of each system and the default (`JournalConfiguration.retention(of:)`).
    let configuration: JournalConfiguration
    /// The log position up to which `timeline` indexes the log (`meta`'s `timeline.through`).
    var timelineThrough: Int64 = 0
    /// Rows of the log past `timelineThrough`, as far as this store knows: exact after an index step, counted up by
    /// each commit's records since (an upper bound: not every record is a row of the log). The writer queue runs
    /// extra background ticks while it is large (`Journal.catchUpIfBehind`).
    private(set) var unindexedRows: Int64 = 0
    /// Whether the last index step found at least half of the rows it took in covered (and deleted them): the index
    /// is then behind the point where this load's events are covered, and catching up pays.
    private(set) var lastStepMostlyCovered = true
    private let upsertTokens: SQLiteStatement
    private let deleteTokens: SQLiteStatement
    private let deleteQuarantine: SQLiteStatement
    private let upsertClient: SQLiteStatement
    private let deleteClients: SQLiteStatement
    private let deleteClient: SQLiteStatement
    private let insertPaused: SQLiteStatement
    private let deletePaused: SQLiteStatement
    /// Snapshots kept per session for verification (`JournalConfiguration.historySnapshots`); 0 for none.
    let historySnapshots: Int
    /// Answers kept per session (`JournalConfiguration.answersPerSession`).
    let answersPerSession: Int
    /// Rows in `answers` per session as far as this store knows (filled by recovery, counted up by inserts): a
    /// session's answers are trimmed back to `answersPerSession` when they reach twice that, so the table stays
    /// bounded without a query per insert.
    var answerCounts: [String: Int] = [:]
    /// Where incremental compaction continues (an `events.seq`).
    private var compactionCursor: Int64 = 0
    /// The background ticks' own bookkeeping (touched only by them, on the writer queue): the group commits the last
    /// tick saw; where the compaction cursor stood then, whether it has since gone past the log's end, and whether
    /// it has come round to where it stood (a sweep of every indexed row since that commit); and whether the last
    /// tick found the index caught up with the log.
    private var commitsAtLastTick = -1
    private var roundFrom: Int64 = 0
    private var roundWrapped = false
    private var roundDone = false
    private var lastTickCaughtUp = false
    /// Events a snapshot of the commit being written deleted through the index (`forgetIndexed`), counted into
    /// `statistics.compactedEvents` once the commit holds.
    private var forgottenInCommit = 0
    /// The WAL file, opened after the first commit, for the interval policy's fsync.
    private var walDescriptor: Int32 = -1
    private let begin: SQLiteStatement
    private let commitStatement: SQLiteStatement
    /// Commits since the last sync (interval policy); a transaction of its own that writes counts too.
    var unsyncedCommits = 0
    var statistics = JournalStatistics()

    /// Opens the journal file whose integrity `JournalOpener` established, in WAL mode with `configuration`.
    init(connection: SQLiteConnection, configuration: JournalConfiguration) throws(JournalError) {
        self.connection = connection
        let synchronous =
            switch configuration.fsync {
            case .perCommit: "FULL"
            case .interval: "NORMAL"
            }
        // Exclusive locking before the first WAL access: the WAL index lives in this process's heap instead of a
        // shared `-shm` mapping (a mapping that stops being writable kills the process with SIGBUS), and the
        // database stays locked for this one process, behind the data directory's own lock.
        try connection.execute(
            """
            PRAGMA locking_mode = EXCLUSIVE;
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
        try Self.migrate(connection)
        answersPerSession = max(configuration.answersPerSession, 1)
        insertSession = try connection.prepare(JournalSchema.insertSession)
        eventRows = try EventRows(connection: connection)
        upsertSnapshot = try connection.prepare(JournalSchema.upsertSnapshot)
        deleteSnapshot = try connection.prepare(JournalSchema.deleteSnapshot)
        deleteSession = try connection.prepare(JournalSchema.deleteSession)
        lastSeq = try connection.prepare(JournalSchema.lastSeq)
        cutoffs = try CompactionCutoffs(connection: connection)
        compactRange = try connection.prepare(JournalSchema.compactRange)
        insertAnswer = try connection.prepare(JournalSchema.insertAnswer)
        deleteAnswers = try connection.prepare(JournalSchema.deleteAnswers)
        trimAnswers = try connection.prepare(JournalSchema.trimAnswers)
        upsertDeadline = try connection.prepare(JournalSchema.upsertDeadline)
        deleteDeadline = try connection.prepare(JournalSchema.deleteDeadline)
        upsertSettled = try connection.prepare(JournalSchema.upsertSettled)
        deleteSettled = try connection.prepare(JournalSchema.deleteSettled)
        upsertActivity = try connection.prepare(JournalSchema.upsertActivity)
        deleteActivity = try connection.prepare(JournalSchema.deleteActivity)
        upsertHistory = try connection.prepare(JournalSchema.upsertHistory)
        trimHistory = try connection.prepare(JournalSchema.trimHistory)
        deleteHistory = try connection.prepare(JournalSchema.deleteHistory)
        trimHistoryBefore = try connection.prepare(JournalSchema.trimHistoryBefore)
        trimHistoryOlder = try connection.prepare(JournalSchema.trimHistoryOlder)
        deleteTimeline = try connection.prepare(JournalSchema.deleteTimeline)
        trimTimeline = try connection.prepare(JournalSchema.trimTimeline)
        stepEnd = try connection.prepare(JournalSchema.compactionStepEnd)
        deleteIndexedEvents = try connection.prepare(JournalSchema.deleteIndexedEvents)
        indexTimelineRange = try connection.prepare(JournalSchema.indexTimeline)
        writeTimelineThrough = try connection.prepare(JournalSchema.writeTimelineThrough)
        oldestKept = try connection.prepare(JournalSchema.oldestKept)
        systemOf = try connection.prepare(JournalSchema.systemOf)
        self.configuration = configuration
        upsertTokens = try connection.prepare(JournalSchema.upsertTokens)
        deleteTokens = try connection.prepare(JournalSchema.deleteTokens)
        deleteQuarantine = try connection.prepare(JournalSchema.deleteQuarantine)
        upsertClient = try connection.prepare(JournalSchema.upsertClient)
        deleteClients = try connection.prepare(JournalSchema.deleteClients)
        deleteClient = try connection.prepare(JournalSchema.deleteClient)
        insertPaused = try connection.prepare(JournalSchema.insertPaused)
        deletePaused = try connection.prepare(JournalSchema.deletePaused)
        historySnapshots = max(configuration.historySnapshots, 0)
        begin = try connection.prepare("BEGIN IMMEDIATE")
        commitStatement = try connection.prepare("COMMIT")
        reloadTimelineThrough()
    }

    /// Writes `records` in one transaction; on any failure the transaction is rolled back and nothing is kept.
    func commit(_ records: [JournalRecord]) -> Result<Void, JournalError> {
        forgottenInCommit = 0
        do {
            try restoreSync()
            try begin.run()
            // By index, each record borrowed where it is: a copy of a record is a reference counted for each of its
            // texts, twice (the loop's copy and the match's). A run of events goes in several rows per statement.
            var index = records.startIndex
            while index < records.endIndex {
                guard case .event = records[index] else {
                    try write(records[index])
                    index += 1
                    continue
                }
                var end = index + 1
                while end < records.endIndex, case .event = records[end] { end += 1 }
                try eventRows.write(records, at: index..<end)
                index = end
            }
            try commitStatement.run()
        } catch {
            try? connection.execute("ROLLBACK")
            reloadTimelineThrough()
            statistics.failedCommits += 1
            return .failure(error)
        }
        unsyncedCommits += 1
        statistics.commits += 1
        statistics.records += records.count
        statistics.compactedEvents += forgottenInCommit
        unindexedRows += Int64(records.count)
        return .success(())
    }

    /// A test write: one transaction of about 64 KiB (room for a real group commit, not just a row), synced like
    /// any commit, that changes nothing recovery reads. It succeeds once the file and its WAL can be written and
    /// synced again, with some room to spare on the disk.
    func probe() -> Result<Void, JournalError> {
        probes += 1
        return commit(
            sql: "INSERT OR REPLACE INTO meta(name, value) VALUES('probe', '\(probes)' || hex(zeroblob(32768)))"
        )
    }

    private var probes = 0

    private func commit(sql: String) -> Result<Void, JournalError> {
        do {
            try restoreSync()
            try begin.run()
            try connection.execute(sql)
            try commitStatement.run()
            return .success(())
        } catch {
            try? connection.execute("ROLLBACK")
            return .failure(error)
        }
    }

    func write(_ record: borrowing JournalRecord) throws(JournalError) {
        switch record {
        case .created(let creation):
            // Events of an earlier incarnation of this id have lower `seq`s than this generation.
            let generation = try lastLogSeq()
            deleteSnapshot.bind(1, creation.id)
            try deleteSnapshot.run()
            insertSession.bind(1, creation.id)
            insertSession.bind(2, creation.system)
            insertSession.bind(3, Int64(bitPattern: creation.epoch))
            insertSession.bind(4, creation.state)
            insertSession.bind(5, creation.createdAt)
            insertSession.bind(6, generation)
            insertSession.bind(7, RecordChecksum.creation(creation, generation: generation))
            insertSession.bind(8, Int64(creation.version))
            try insertSession.run()
            try forgetAnswers(of: creation.id)
            deleteHistory.bind(1, creation.id)
            try deleteHistory.run()
            deleteTimeline.bind(1, creation.id)
            try deleteTimeline.run()
            // The initial state is the first kept snapshot: the events from revision 1 on are kept for verification.
            try keep(
                creation.id,
                revision: 0,
                state: creation.state,
                version: creation.version,
                system: creation.system
            )
            deleteDeadline.bind(1, creation.id)
            try deleteDeadline.run()
            deleteSettled.bind(1, creation.id)
            try deleteSettled.run()
            deleteActivity.bind(1, creation.id)
            try deleteActivity.run()
            deleteTokens.bind(1, creation.id)
            try deleteTokens.run()
            deleteQuarantine.bind(1, creation.id)
            try deleteQuarantine.run()
            deleteClients.bind(1, creation.id)
            try deleteClients.run()
            deletePaused.bind(1, creation.id)
            try deletePaused.run()
        case .event:
            try eventRows.write([copy record], at: 0..<1)
        case .snapshot(let id, let revision, let state, let version):
            upsertSnapshot.bind(1, id)
            upsertSnapshot.bind(2, Int64(bitPattern: revision))
            upsertSnapshot.bind(3, state)
            upsertSnapshot.bind(4, RecordChecksum.snapshot(id, revision, state, version: version))
            upsertSnapshot.bind(5, Int64(version))
            try upsertSnapshot.run()
            try keep(id, revision: revision, state: state, version: version)
        case .removed(let id):
            // The session's events go with it, as they do from PostgreSQL's journal: the indexed ones here, through
            // the index, and those the index has not taken in yet when it does (its step compacts first, and a
            // session gone covers all its events). Recovery skips any still there.
            deleteIndexedEvents.bind(1, id)
            deleteIndexedEvents.bind(2, Int64.max)
            try deleteIndexedEvents.run()
            forgottenInCommit += connection.changes
            deleteSnapshot.bind(1, id)
            try deleteSnapshot.run()
            deleteSession.bind(1, id)
            try deleteSession.run()
            try forgetAnswers(of: id)
            deleteDeadline.bind(1, id)
            try deleteDeadline.run()
            deleteSettled.bind(1, id)
            try deleteSettled.run()
            deleteActivity.bind(1, id)
            try deleteActivity.run()
            deleteHistory.bind(1, id)
            try deleteHistory.run()
            deleteTimeline.bind(1, id)
            try deleteTimeline.run()
            deleteTokens.bind(1, id)
            try deleteTokens.run()
            deleteQuarantine.bind(1, id)
            try deleteQuarantine.run()
            deleteClients.bind(1, id)
            try deleteClients.run()
            deletePaused.bind(1, id)
            try deletePaused.run()
        case .deadline(let id, let at?):
            upsertDeadline.bind(1, id)
            upsertDeadline.bind(2, at)
            try upsertDeadline.run()
        case .deadline(let id, nil):
            deleteDeadline.bind(1, id)
            try deleteDeadline.run()
        case .settled(let id, let revision?):
            upsertSettled.bind(1, id)
            upsertSettled.bind(2, Int64(bitPattern: revision))
            try upsertSettled.run()
            upsertActivity.bind(1, id)
            upsertActivity.bind(2, Int64(Date().timeIntervalSince1970 * 1000))
            try upsertActivity.run()
        case .settled(let id, nil):
            deleteSettled.bind(1, id)
            try deleteSettled.run()
        case .tokens(let id, 0):
            deleteTokens.bind(1, id)
            try deleteTokens.run()
        case .tokens(let id, let generation):
            upsertTokens.bind(1, id)
            upsertTokens.bind(2, Int64(bitPattern: generation))
            upsertTokens.bind(3, RecordChecksum.tokens(id, generation))
            try upsertTokens.run()
        case .paused(let id, true):
            insertPaused.bind(1, id)
            try insertPaused.run()
        case .paused(let id, false):
            deletePaused.bind(1, id)
            try deletePaused.run()
        case .sequenced(let record):
            upsertClient.bind(1, record.sessionID)
            upsertClient.bind(2, record.client)
            upsertClient.bind(3, Int64(bitPattern: record.sequence))
            upsertClient.bind(4, Int64(bitPattern: record.epoch))
            upsertClient.bind(5, Int64(bitPattern: record.revision))
            upsertClient.bind(6, Int64(record.status))
            upsertClient.bind(7, record.answer)
            upsertClient.bind(8, RecordChecksum.sequence(record))
            try upsertClient.run()
        case .clientForgotten(let id, let client):
            deleteClient.bind(1, id)
            deleteClient.bind(2, client)
            try deleteClient.run()
        case .answered(let answer):
            insertAnswer.bind(1, answer.sessionID)
            insertAnswer.bind(2, answer.key)
            insertAnswer.bind(3, Int64(bitPattern: answer.fingerprint))
            insertAnswer.bind(4, Int64(bitPattern: answer.epoch))
            insertAnswer.bind(5, Int64(bitPattern: answer.revision))
            insertAnswer.bind(6, answer.state)
            insertAnswer.bind(7, RecordChecksum.answer(answer))
            try insertAnswer.run()
            let count = answerCounts[answer.sessionID, default: 0] + 1
            if count >= 2 * answersPerSession {
                trimAnswers.bind(1, answer.sessionID)
                trimAnswers.bind(2, Int64(answersPerSession))
                try trimAnswers.run()
                answerCounts[answer.sessionID] = answersPerSession
            } else {
                answerCounts[answer.sessionID] = count
            }
        }
    }

    /// Keeps a snapshot in `history` and trims the session's kept snapshots to its system's retention; nothing when
    /// none are kept. The system is looked up only when some system has a retention of its own.
    private func keep(
        _ id: String,
        revision: UInt64,
        state: String,
        version: Int,
        system: String? = nil
    ) throws(JournalError) {
        var system = system
        if system == nil, !configuration.systemRetention.isEmpty {
            systemOf.bind(1, id)
            system = try systemOf.step() ? systemOf.text(0) : nil
            systemOf.reset()
        }
        let retention = configuration.retention(of: system)
        guard retention.keepsSnapshots else {
            try forgetIndexed(id, snapshot: revision)
            return
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        upsertHistory.bind(1, id)
        upsertHistory.bind(2, Int64(bitPattern: revision))
        upsertHistory.bind(3, Int64(version))
        upsertHistory.bind(4, state)
        upsertHistory.bind(5, RecordChecksum.snapshot(id, revision, state, version: version))
        upsertHistory.bind(6, now)
        try upsertHistory.run()
        switch retention {
        case .forever:
            break
        case .snapshots(let count):
            trimHistory.bind(1, id)
            trimHistory.bind(2, Int64(count))
            try trimHistory.run()
        case .events(let count):
            guard revision > UInt64(count) else { return }
            trimHistoryBefore.bind(1, id)
            trimHistoryBefore.bind(2, Int64(revision - UInt64(count)))
            try trimHistoryBefore.run()
        case .age(let milliseconds):
            trimHistoryOlder.bind(1, id)
            trimHistoryOlder.bind(2, now - milliseconds)
            try trimHistoryOlder.run()
        }
        guard retention != .forever else { return }
        try forgetIndexed(id, snapshot: revision)
    }

    /// Deletes session `id`'s indexed events that a snapshot just written covers, and their index rows, in the
    /// snapshot's transaction. Covered is what `compactRange` deletes: up to the oldest snapshot kept in `history`,
    /// whatever retention kept it (a journal may be reopened with another), else up to the latest snapshot,
    /// `snapshot`; a history read gives nothing before that. The events the index has not taken in yet are deleted
    /// as it takes them in (the background step compacts first). These, indexed before a snapshot covered them
    /// (whenever the index keeps up with the log), were left to the background sweep, and their index rows until the
    /// next full `compact()`, which only a start runs: `timeline` kept a row for every event ever posted.
    private func forgetIndexed(_ id: String, snapshot: UInt64) throws(JournalError) {
        oldestKept.bind(1, id)
        let oldest: Int64? = try oldestKept.step() && !oldestKept.isNull(0) ? oldestKept.int64(0) : nil
        oldestKept.reset()
        let revision = oldest ?? Int64(bitPattern: snapshot)
        guard revision > 0 else { return }
        deleteIndexedEvents.bind(1, id)
        deleteIndexedEvents.bind(2, revision)
        try deleteIndexedEvents.run()
        forgottenInCommit += connection.changes
        trimTimeline.bind(1, id)
        trimTimeline.bind(2, revision)
        try trimTimeline.run()
    }

    /// Deletes the events with `seq` in [`from`, `before`) that compaction deletes (`JournalSchema.compactRange`), in
    /// the caller's transaction; returns how many.
    func compactEvents(from: Int64, before: Int64) throws(JournalError) -> Int {
        cutoffs.reset()
        compactRange.bind(1, from)
        compactRange.bind(2, before)
        try compactRange.run()
        return connection.changes
    }

    /// The log's last position (`sqlite_sequence`'s, so a deleted last row still counts).
    func lastLogSeq() throws(JournalError) -> Int64 {
        defer { lastSeq.reset() }
        return try lastSeq.step() ? lastSeq.int64(0) : 0
    }

    /// Begins and commits a transaction of the writer's own (a background tick's) with the statements prepared once.
    func beginTransaction() throws(JournalError) { try begin.run() }
    func commitTransaction() throws(JournalError) { try commitStatement.run() }

    /// Reads `timelineThrough` back from `meta`: at open, and after a rolled-back transaction that had moved it.
    func reloadTimelineThrough() {
        let text = try? connection.texts("SELECT value FROM meta WHERE name = '\(JournalSchema.timelineThroughName)'")
        timelineThrough = Int64(text?.first ?? "0") ?? 0
    }

    /// Indexes the next `rows` of the log in `timeline` (never past its last row) and moves `timeline.through`, in the
    /// caller's transaction. With `compactingFirst`, the events of those rows that compaction would delete are deleted
    /// first, so that only the ones a history can still read get an index row (under sustained posting nearly every
    /// row the step reaches is already covered by its session's oldest kept snapshot: indexing it would write an index
    /// row for an event deleted next, and leave that row behind until a full `compact()`). Returns the rows of the log
    /// covered and the events deleted.
    func indexTimeline(
        rows: Int64,
        compactingFirst: Bool = false
    ) throws(JournalError) -> (covered: Int64, deleted: Int) {
        let last = try lastLogSeq()
        guard last > timelineThrough else {
            unindexedRows = 0
            return (0, 0)
        }
        let through = min(last, timelineThrough + rows)
        var deleted = 0
        if compactingFirst {
            deleted = try compactEvents(from: timelineThrough + 1, before: through + 1)
        }
        indexTimelineRange.bind(1, timelineThrough)
        indexTimelineRange.bind(2, through)
        try indexTimelineRange.run()
        writeTimelineThrough.bind(1, String(through))
        try writeTimelineThrough.run()
        let covered = through - timelineThrough
        timelineThrough = through
        unindexedRows = last - through
        if compactingFirst { lastStepMostlyCovered = Int64(deleted) * 2 >= covered }
        return (covered, deleted)
    }

    private func forgetAnswers(of id: String) throws(JournalError) {
        deleteAnswers.bind(1, id)
        try deleteAnswers.run()
        answerCounts[id] = nil
    }

    /// Whether a background tick that indexes the log and sweeps it can find anything to do. Which events compaction
    /// deletes changes only with a group commit (a snapshot kept, a session removed or created again): once the index
    /// has caught up with the log (the last tick took in nothing) and the sweep has come round over every indexed row
    /// since the last commit, ticks find nothing until the next one, so an idle server stops running them. (The round
    /// is the cursor's, not a count of ticks from the log's length: a sweep counts rows that exist, and an old log's
    /// length would have kept the ticks going for hours.)
    func tickMayFindWork() -> Bool {
        if statistics.commits != commitsAtLastTick {
            commitsAtLastTick = statistics.commits
            roundFrom = compactionCursor > timelineThrough ? 0 : compactionCursor
            roundWrapped = false
            roundDone = false
        }
        return !lastTickCaughtUp || !roundDone
    }

    /// A background tick is done; `caughtUp`: it committed and its index step found nothing left to take in (a tick
    /// that failed did neither, so the ticks go on).
    func tickEnded(caughtUp: Bool) {
        lastTickCaughtUp = caughtUp
        statistics.compactionTicks += 1
    }

    /// Deletes unneeded events among the next `rows` rows of the log up to `end` (the log's last row when nil),
    /// starting over from the first once past it, in the caller's transaction. Returns the number deleted. A step
    /// counts rows that exist, not positions: a sweep that counted positions went over the deleted part of the log
    /// (most of it, on a server that has run a while) a step at a time, so that its pass from the start took longer
    /// the longer the server ran, and events covered after they were indexed waited that long to go.
    func compactStep(rows: Int64, through end: Int64? = nil) throws(JournalError) -> Int {
        let last: Int64
        if let end { last = end } else { last = try lastLogSeq() }
        if compactionCursor > last { compactionCursor = 0 }
        let from = compactionCursor
        stepEnd.bind(1, from)
        stepEnd.bind(2, last)
        stepEnd.bind(3, max(rows, 1))
        let to = try stepEnd.step() ? stepEnd.int64(0) : last + 1
        stepEnd.reset()
        compactionCursor = to
        if roundWrapped && to > roundFrom { roundDone = true }
        if to > last {
            if roundFrom == 0 { roundDone = true }
            roundWrapped = true
        }
        return try compactEvents(from: from, before: to)
    }

    /// The background tick's transaction commits without a sync of its own under the per-commit policy
    /// (`Journal.compactOnQueue`: nothing an answer depends on, and the next commit's sync of the WAL covers it).
    /// Every other commit sets the policy's sync back first and fails when it cannot: an append is never committed
    /// unsynced because a tick could not undo its setting.
    private var syncRelaxed = false

    func relaxSync() {
        guard configuration.fsync == .perCommit else { return }
        syncRelaxed = true
        try? connection.execute("PRAGMA synchronous=NORMAL")
    }

    func restoreSync() throws(JournalError) {
        guard syncRelaxed else { return }
        try connection.execute("PRAGMA synchronous=FULL")
        syncRelaxed = false
    }

    /// Forces committed writes to stable storage by syncing the WAL file: every committed frame is then on disk,
    /// which is what `synchronous=FULL` does at each commit. (A checkpoint would sync too, but it also copies
    /// pages into the database file and syncs that: far more I/O per interval.)
    func sync() throws(JournalError) {
        guard unsyncedCommits > 0 else { return }
        if walDescriptor < 0 {
            walDescriptor = open(connection.path + "-wal", O_RDONLY | O_CLOEXEC)
            guard walDescriptor >= 0 else { throw JournalError(.sqlite, "cannot open the WAL: errno \(errno)") }
            // The WAL's directory entry is new: make it durable once.
            let directory = open((connection.path as NSString).deletingLastPathComponent, O_RDONLY | O_CLOEXEC)
            if directory >= 0 {
                fsync(directory)
                Glibc.close(directory)
            }
        }
        guard fsync(walDescriptor) == 0 else { throw JournalError(.sqlite, "fsync of the WAL: errno \(errno)") }
        unsyncedCommits = 0
        statistics.syncs += 1
    }

    /// The database file's and the WAL's sizes added up, in bytes (a missing file counts 0).
    func fileBytes() -> Int64 {
        var total: Int64 = 0
        for file in [connection.path, connection.path + "-wal"] {
            var info = stat()
            if stat(file, &info) == 0 { total += Int64(info.st_size) }
        }
        return total
    }

    /// Finalizes every statement and closes the connection (which checkpoints and removes the WAL file).
    func close() {
        for statement in [
            insertSession, upsertSnapshot, deleteSnapshot, deleteSession, lastSeq, compactRange, begin,
            commitStatement, insertAnswer, deleteAnswers, trimAnswers, upsertDeadline, deleteDeadline,
            upsertSettled, deleteSettled, upsertActivity, deleteActivity, upsertHistory, trimHistory, deleteHistory,
            trimHistoryBefore, trimHistoryOlder, deleteTimeline, trimTimeline, oldestKept, stepEnd,
            deleteIndexedEvents, indexTimelineRange, writeTimelineThrough, systemOf, upsertTokens, deleteTokens,
            deleteQuarantine, upsertClient, deleteClients,
            insertPaused, deletePaused, deleteClient,
        ] {
            statement.finalize()
        }
        eventRows.finalize()
        cutoffs.finalize()
        if walDescriptor >= 0 { Glibc.close(walDescriptor) }
        walDescriptor = -1
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
    /// Events deleted by compaction outside `compact()`: background steps, and snapshots that cover indexed events.
    public var compactedEvents = 0
    /// Background compaction ticks that ran (an idle journal's stop once they can find nothing).
    public var compactionTicks = 0
    /// Of those, the ticks run between group commits because the index lagged the log by more than
    /// `JournalConfiguration.catchUpSteps` steps, not by the timer.
    public var catchUpTicks = 0

    package init() {}
}

extension RecordChecksum {
    /// A version other than 1 is covered; a version 1 record sums as it did before versions existed.
    package static func creation(_ creation: SessionCreation, generation: Int64) -> Int64 {
        if creation.version != 1 {
            return of(
                creation.id,
                creation.epoch,
                creation.system,
                creation.state,
                String(generation),
                "v\(creation.version)"
            )
        }
        return of(creation.id, creation.epoch, creation.system, creation.state, String(generation))
    }

    /// A session's token generation.
    package static func tokens(_ id: String, _ generation: UInt64) -> Int64 {
        of(id, generation, "tokens")
    }

    package static func snapshot(_ id: String, _ revision: UInt64, _ state: String, version: Int) -> Int64 {
        version == 1 ? of(id, revision, state) : of(id, revision, state, "v\(version)")
    }

    package static func event(
        _ id: String,
        _ revision: UInt64,
        _ origin: Int,
        _ event: EventText,
        _ stamp: EventStamp
    ) -> Int64 {
        id.withUTF8Bytes { eventSum($0, revision, origin, event, stamp) }
    }

    /// ``event(_:_:_:_:_:)`` of the id's UTF-8 bytes.
    private static func eventSum(
        _ id: UnsafeBufferPointer<UInt8>,
        _ revision: UInt64,
        _ origin: Int,
        _ event: EventText,
        _ stamp: EventStamp
    ) -> Int64 {
        // The row's fields laid out in one buffer on the stack and summed in one call: each field summed as it came
        // cost about 60 instructions, 1,200 a row (session 31). Texts too long for the buffer are summed as they come.
        event.utf8.withUnsafeBytes { event in
            let number = eventNumber(revision, origin)
            guard ChecksumLayout.room(id: id.count, event: event.count, stamp: stamp) <= onceBytes else {
                var sum = RecordChecksum()
                sum.addEvent(id: UnsafeRawBufferPointer(id), number: number, event: event, stamp: stamp)
                return sum.value
            }
            return withUnsafeTemporaryAllocation(byteCount: onceBytes, alignment: 8) { room in
                var layout = ChecksumLayout(in: room.baseAddress!)
                layout.addEvent(id: UnsafeRawBufferPointer(id), number: number, event: event, stamp: stamp)
                return checksum(layout)
            }
        }
    }

    /// The room on the stack for an event's fields summed at once.
    private static let onceBytes = 512
}
