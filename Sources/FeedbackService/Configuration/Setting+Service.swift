/// The server's own settings: listener, limits, sessions, streams, shutdown and journal. `feedback-host` adds its
/// logging and the built-in systems' settings to these for the check and `--help`.
extension Setting {
    /// The listener's address.
    public static let host = Setting(
        "host",
        .text,
        default: "127.0.0.1",
        "the address to listen on (0.0.0.0: every one)"
    )
    static let port = Setting("port", .integer(0...65_535), default: "8080", "the TCP port; 0 picks a free one")
    static let maxConnections = Setting(
        "max.connections",
        .integer(1...1_000_000),
        default: "10000",
        "open connections at most (lowered to fit the descriptor limit); past it a new one gets 503 and is closed"
    )
    static let httpBodyTimeout = Setting(
        "http.body.timeout.ms",
        .integer(1...3_600_000),
        default: "30000",
        "a request body must be complete this long after its head, however it trickles; else 408 and a close"
    )
    static let httpBodyMinRate = Setting(
        "http.body.min.rate",
        .integer(0...1_000_000_000),
        default: "1024",
        "bytes per second a request body must average once its grace period is over, else 408 and a close; 0: none"
    )
    static let httpBodyGrace = Setting(
        "http.body.grace.ms",
        .integer(0...3_600_000),
        default: "5000",
        "how long a request body may take before its minimum rate applies"
    )
    static let httpDescriptorReserve = Setting(
        "http.fd.reserve",
        .integer(0...1_000_000),
        default: "64",
        "file descriptors kept for all but client connections; max.connections is lowered to the limit less this"
    )
    static let maxActiveSessions = Setting(
        "sessions.max.active",
        .integer(1...100_000_000),
        default: "100000",
        "sessions in memory at most; with a journal the least recently used unwatched one leaves memory to make "
            + "room (passivated), without one (or when all are watched) a create gets 503"
    )
    static let sessionsMaxBytes = Setting(
        "sessions.max.bytes",
        .integer(65_536...Int.max),
        default: "536870912",
        "the memory all sessions may hold together, in bytes; past it a create or a growing event gets 507"
    )
    static let sessionStateMaxBytes = Setting(
        "session.state.max.bytes",
        .integer(1024...1024 * 1024 * 1024),
        default: "1048576",
        "the largest state one session may hold, encoded, in bytes; an event that would pass it gets 422"
    )
    static let maxEventBodyBytes = Setting(
        "max.event.body.bytes",
        .integer(1...64 * 1024 * 1024),
        default: "65536",
        "the largest request body (events, a session's state), in bytes; larger ones get 413"
    )
    static let maxEventsPerBatch = Setting(
        "max.events.per.batch",
        .integer(1...100_000),
        default: "100",
        "events in one POST at most"
    )
    static let inboxSize = Setting(
        "inbox.size",
        .integer(1...10_000_000),
        default: "1000",
        "client events a session holds before they are reduced; past it a POST gets 429"
    )
    static let sessionClientsMax = Setting(
        "session.clients.max",
        .integer(1...1_000_000),
        default: "256",
        "clients whose numbered posts (Client-ID) a session remembers; a new one past it forgets the least recently "
            + "active, whose next post past 1 is then 409 client-unknown"
    )
    static let sessionIdle = Setting(
        "session.idle.ms",
        .integer(1...Int.max),
        default: "900000",
        "a session nobody posts to, reads or watches for this long is passivated (kept in the journal only; "
            + "the next request activates it); without a journal it ends (expired)"
    )
    static let sessionWakeRate = Setting(
        "session.wake.rate",
        .integer(0...1_000_000),
        default: "1000",
        "passive sessions woken a second at most for their due timers (0: no bound), so that many deadlines at once "
            + "do not restart all their effects at once"
    )
    static let sessionActivationRate = Setting(
        "session.activation.rate",
        .integer(0...1_000_000),
        default: "200",
        "activated sessions whose effects may restart their upstream fetches a second, at most (0: no bound); "
            + "the others' first fetch waits its turn, so that many activations at once do not all hit the upstream"
    )
    static let sessionRetention = Setting(
        "session.retention",
        .text,
        default: "forever",
        "how long a passive session nobody uses is kept in the journal before it is deleted: forever, or an age "
            + "such as 30d, 12h, 90m or 45s since it left memory (a session with a timer still to come is kept)",
        check: { value in Setting.retentionAge(value) == nil ? "forever or a whole number of d, h, m or s" : nil }
    )
    static let corsOrigins = Setting(
        "cors.origins",
        .list,
        default: "",
        "origins whose pages may call the API from a browser (none: same origin only)"
    )
    static let shutdownDeadline = Setting(
        "shutdown.deadline.ms",
        .integer(1...3_600_000),
        default: "10000",
        "how long a graceful shutdown may take before connections are cut"
    )
    static let shutdownDelay = Setting(
        "shutdown.delay.ms",
        .integer(0...3_600_000),
        default: "0",
        "how long a shutdown serves with /readyz failing before it closes streams (at most a quarter of the deadline)"
    )
    static let streamHeartbeat = Setting(
        "stream.heartbeat.ms",
        .integer(1...3_600_000),
        default: "15000",
        "a stream with nothing to send for this long gets a comment"
    )
    static let streamStall = Setting(
        "stream.stall.ms",
        .integer(1...3_600_000),
        default: "30000",
        "a response whose output does not move for this long is closed (a slow stream, a client that stopped reading)"
    )
    static let streamMaxPerSession = Setting(
        "stream.max.per.session",
        .integer(1...10_000_000),
        default: "10000",
        "open streams of one session at most"
    )
    static let streamMaxTotal = Setting(
        "stream.max.total",
        .integer(1...10_000_000),
        default: "50000",
        "open streams at most"
    )
    static let streamDrain = Setting(
        "stream.drain.ms",
        .integer(0...3_600_000),
        default: "5000",
        "a shutdown closes the open streams spread over this window (at most half the deadline)"
    )
    static let streamRetry = Setting(
        "stream.retry.ms",
        .integer(0...3_600_000),
        default: "2000",
        "the reconnection time a stream tells its client (with jitter)"
    )
    static let streamLinger = Setting(
        "stream.linger.ms",
        .integer(0...3_600_000),
        default: "30000",
        "a session's stream state is kept this long after its last stream closed, so a reconnect gets a patch"
    )
    static let streamHighWater = Setting(
        "stream.highwater.bytes",
        .integer(1...1024 * 1024 * 1024),
        default: "262144",
        "a stream with more bytes than this not yet sent is held back and later gets the latest state"
    )
    static let streamWritePart = Setting(
        "stream.write.part",
        .integer(1...1_000_000),
        default: "1024",
        "a state's fan-out hands the shards this many streams at a time, so they send while the rest are prepared"
    )
    static let streamGzip = Setting(
        "stream.gzip",
        .boolean,
        default: "false",
        "gzip streams for clients that accept it (a deflate stream per subscriber)"
    )
    static let dataDirectory = Setting(
        "data.dir",
        .text,
        default: "data",
        "where the session journal lives (created when missing); none keeps sessions only in memory"
    )
    static let fsync = Setting(
        "fsync",
        .text,
        default: "per-commit",
        "when the journal is synced to disk: per-commit, or interval:MS",
        check: { value in
            if value == "per-commit" { return nil }
            guard value.hasPrefix("interval:"), let ms = Int(value.dropFirst("interval:".count)), ms > 0 else {
                return "per-commit or interval:MS with MS > 0"
            }
            return nil
        }
    )
    static let journalSnapshotInterval = Setting(
        "journal.snapshot.interval",
        .integer(1...1_000_000),
        default: "100",
        "revisions between a session's journaled snapshots"
    )
    static let journalCommitDelay = Setting(
        "journal.commit.delay.us",
        .integer(0...1_000_000),
        default: "500",
        "how long a group commit gathers concurrent writers, in microseconds (a lone writer never waits)"
    )
    static let journalProbe = Setting(
        "journal.probe.ms",
        .integer(1...3_600_000),
        default: "250",
        "while the journal cannot commit, how often a test write checks whether it can again"
    )

    static let journalURL = Setting(
        "journal.url",
        .text,
        default: "",
        "a shared PostgreSQL journal, postgres://USER@HOST:PORT/DB, instead of SQLite in data.dir (no password here)",
        check: { value in
            guard !value.isEmpty else { return nil }
            guard value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") else {
                return "postgres://USER@HOST:PORT/DB (or empty for the SQLite journal in data.dir)"
            }
            let authority = value.drop { $0 != "/" }.dropFirst(2).prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@"), authority[..<at].contains(":") {
                return "a URL without a password (give it in a file named by journal.password.file, or PGPASSWORD)"
            }
            if value.contains("password=") {
                return "a URL without a password (give it in a file named by journal.password.file, or PGPASSWORD)"
            }
            return nil
        }
    )
    static let journalLease = Setting(
        "journal.lease.ms",
        .integer(100...3_600_000),
        default: "5000",
        "with journal.url: a replica that stops renewing its lease this long (killed, stalled) leaves the due timers of "
            + "its sessions to the others"
    )
    static let journalOwnershipWatch = Setting(
        "journal.ownership.watch.ms",
        .integer(0...3_600_000),
        default: "1000",
        "with journal.url: how often a replica confirms that it still holds the sessions its streams follow; a stream of "
            + "one another replica took ends with event: moved (0: only at a request or a refused write)"
    )
    static let journalPasswordFile = Setting(
        "journal.password.file",
        .text,
        default: "",
        "a file holding the PostgreSQL journal's password (else libpq's PGPASSWORD or ~/.pgpass)"
    )

    /// Every setting the service reads, in the order `--help` lists them.
    public static let service: [Setting] =
        [
            host, port, maxConnections, httpBodyTimeout, httpBodyMinRate, httpBodyGrace, httpDescriptorReserve,
            maxActiveSessions,
            sessionsMaxBytes, sessionStateMaxBytes, maxEventBodyBytes, maxEventsPerBatch, inboxSize, sessionClientsMax,
            sessionIdle,
            sessionWakeRate, sessionActivationRate, sessionRetention,
            corsOrigins, shutdownDeadline, shutdownDelay, streamHeartbeat, streamStall, streamMaxPerSession,
            streamMaxTotal, streamDrain, streamRetry, streamLinger, streamHighWater, streamWritePart, streamGzip,
            dataDirectory, fsync,
            journalSnapshotInterval, journalCommitDelay, journalProbe, journalURL, journalPasswordFile,
            journalLease, journalOwnershipWatch, auth, authCreate,
            authKeyFile, authPreviousKeyFile,
            authKeys, authSecret, authTokenTTL, authCacheSize, logFormat, logAccess, logAccessLevel,
            logAccessBufferBytes,
            logAccessFlush, clock, clockStart, clockSettle,
        ] + versions + inspection
}

extension Setting {
    /// `session.retention`'s value as an age: `.some(nil)` for `forever`, nil when it is neither that nor a whole
    /// number followed by `d`, `h`, `m` or `s` (at least one second).
    static func retentionAge(_ value: String) -> Duration?? {
        if value == "forever" { return .some(nil) }
        guard let unit = value.last, let number = Int(value.dropLast()), number > 0 else { return nil }
        let seconds: Int
        switch unit {
        case "d": seconds = 86_400
        case "h": seconds = 3_600
        case "m": seconds = 60
        case "s": seconds = 1
        default: return nil
        }
        let (total, overflow) = number.multipliedReportingOverflow(by: seconds)
        return overflow ? nil : .some(.seconds(total))
    }
}
