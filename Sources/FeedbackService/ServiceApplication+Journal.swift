public import Configuration
import Dispatch
import Foundation
public import Logging
public import Metrics
public import SessionJournal
import SessionJournalPostgres

/// The journal's configuration keys and the restore at start.
extension ServiceApplication {
    /// The data directory when neither `--data-dir` nor `FEEDBACKHOST_DATA_DIR` is given: `data` in the working
    /// directory. `none` turns the journal off (sessions then live only in memory).
    public static let defaultDataDirectory = Setting.dataDirectory.defaultValue

    /// Opens the journal the keys ask for, without reading any session back (each is activated on its first
    /// request); nil when `data.dir` is `none`.
    ///
    /// Keys: `data.dir` (a directory, created when missing; `none` for no journal), `fsync` (`per-commit`, the
    /// default, or `interval:MS`), `journal.snapshot.interval` (revisions between a session's snapshots, 100),
    /// `journal.commit.delay.us` (the group commit's gathering window under concurrent writers, 500; 0 for none),
    /// `journal.probe.ms` (while the journal cannot commit, the interval of its test writes, 250).
    /// The journal's metrics and the broken-session gauge go to `metricsFactory`. `vfs` names a registered SQLite
    /// VFS to open the journal through: only tests pass one (to inject faults); no configuration key reaches it.
    /// Throws `.locked` when another process holds the data directory.
    public static func openJournal(
        reader: ConfigReader,
        logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        vfs: String? = nil,
        systemRetention: [String: HistoryRetention] = [:]
    ) throws(JournalError) -> (persistence: SessionPersistence, summary: JournalRecovery.Summary)? {
        let url = reader.string(.journalURL)
        if !url.isEmpty {
            return try openPostgresJournal(
                url: url,
                reader: reader,
                logger: logger,
                metricsFactory: metricsFactory,
                systemRetention: systemRetention
            )
        }
        let directory = reader.string(.dataDirectory)
        guard directory != "none", !directory.isEmpty else {
            logger.info("journal off: sessions live only in memory (data.dir is none)")
            return nil
        }
        let fsyncText = reader.string(.fsync)
        guard let fsync = FsyncPolicy(parsing: fsyncText) else {
            throw JournalError(.configuration, "fsync is per-commit or interval:MS (MS > 0), not \"\(fsyncText)\"")
        }
        let journal = try Journal.open(
            directory: directory,
            configuration: JournalConfiguration(
                fsync: fsync,
                answersPerSession: ServiceConfiguration.idempotencyKeysPerSession,
                commitDelayMicroseconds: max(0, reader.int(.journalCommitDelay)),
                probeIntervalMilliseconds: max(1, reader.int(.journalProbe)),
                vfs: vfs
            ).indexingTimeline(reader.int(.journalTimelineRows)).keepingHistory(reader.int(.journalHistorySnapshots))
                .keepingHistory(
                    HistoryRetention(parsing: reader.string(.historyRetention)),
                    systems: systemRetention
                ),
            logger: logger,
            metricsFactory: metricsFactory
        )
        let marks = crashMarks(in: directory, logger: logger)
        let (persistence, summary) = try persistence(
            of: journal,
            reader: reader,
            logger: logger,
            metricsFactory,
            marks: marks
        )
        logger.info(
            "journal open",
            metadata: ["data.dir": "\(directory)", "fsync": "\(fsync)", "sessions": "\(summary.sessions)"]
        )
        return (persistence, summary)
    }

    /// The PostgreSQL journal at `url` (`journal.url`), its password read from `journal.password.file` when set (else
    /// libpq reads `PGPASSWORD` or `~/.pgpass`). Keys `journal.snapshot.interval`, `journal.probe.ms`,
    /// `journal.history.snapshots` and `journal.lease.ms` apply.
    static func openPostgresJournal(
        url: String,
        reader: ConfigReader,
        logger: Logger,
        metricsFactory: any MetricsFactory,
        systemRetention: [String: HistoryRetention] = [:]
    ) throws(JournalError) -> (persistence: SessionPersistence, summary: JournalRecovery.Summary) {
        let journal = try PostgresJournal.open(
            url: url,
            password: try journalPassword(file: reader.string(.journalPasswordFile)),
            configuration: JournalConfiguration(
                answersPerSession: ServiceConfiguration.idempotencyKeysPerSession,
                probeIntervalMilliseconds: max(1, reader.int(.journalProbe))
            ).keepingHistory(reader.int(.journalHistorySnapshots)).keepingHistory(
                HistoryRetention(parsing: reader.string(.historyRetention)),
                systems: systemRetention
            ),
            leaseMilliseconds: reader.int(.journalLease),
            logger: logger,
            metricsFactory: metricsFactory
        )
        let (persistence, summary) = try persistence(
            of: journal,
            reader: reader,
            logger: logger,
            metricsFactory,
            marks: crashMarks(in: reader.string(.dataDirectory), logger: logger)
        )
        logger.info("journal open (PostgreSQL)", metadata: ["sessions": "\(summary.sessions)"])
        return (persistence, summary)
    }

    /// The password in `file` (`journal.password.file`, its trailing newline dropped); nil when no file is named, so
    /// that libpq reads `PGPASSWORD` or `~/.pgpass`. `feedback-host verify --journal-password-file` reads it too.
    public static func journalPassword(file: String) throws(JournalError) -> String? {
        guard !file.isEmpty else { return nil }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw JournalError(.configuration, "journal.password.file \(file) cannot be read")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    /// Starts an open journal and wraps it for the service, with the keys that apply to either journal
    /// (`journal.snapshot.interval`, `journal.state.checksums`).
    private static func persistence(
        of journal: any SessionJournaling,
        reader: ConfigReader,
        logger: Logger,
        _ metricsFactory: any MetricsFactory,
        marks: CrashMarks
    ) throws(JournalError) -> (SessionPersistence, JournalRecovery.Summary) {
        let summary = try journal.start()
        let persistence = SessionPersistence(
            journal: journal,
            snapshotInterval: reader.int(.journalSnapshotInterval),
            logger: logger,
            metricsFactory: metricsFactory,
            stateChecksums: reader.bool(.journalStateChecksums),
            marks: marks
        )
        return (persistence, summary)
    }

    /// The crash marks in `directory` (`data.dir`), beside the SQLite journal, which holds the directory for this
    /// process alone; with PostgreSQL a replica's own (a pod's volume, which outlives a container's restart). A file
    /// another holder keeps (replicas started in one working directory, a journal reopened in one process) or no
    /// directory (`none`) leaves the server without marks, said in the log: a trap there is not quarantined.
    private static func crashMarks(in directory: String, logger: Logger) -> CrashMarks {
        guard directory != "none", !directory.isEmpty else { return .disabled }
        do {
            return try CrashMarks.open(directory: directory)
        } catch {
            logger.warning(
                "crash marks off: a trap in a system's code will not quarantine its session",
                metadata: ["data.dir": "\(directory)", "error": "\(error.message)"]
            )
            return .disabled
        }
    }

    /// Counts the journaled sessions as passive (each is activated on its first request, or when a durable timer
    /// of its comes due) and compacts the journal.
    static func start(
        _ journaled: (persistence: SessionPersistence, summary: JournalRecovery.Summary),
        service: SessionService,
        logger: Logger
    ) {
        service.metrics.sessionsPassive.increment(by: Double(journaled.summary.sessions))
        logger.info(
            "sessions journaled, each brought into memory on its first request",
            metadata: ["sessions": "\(journaled.summary.sessions)"]
        )
        do {
            let report = try journaled.persistence.journal.compact()
            logger.info("journal compacted", metadata: ["bytes": "\(report.bytes)", "vacuumed": "\(report.vacuumed)"])
        } catch {
            logger.warning("journal compaction failed", metadata: ["error": "\(error)"])
        }
    }
}
