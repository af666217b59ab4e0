internal import CLibPQ
import Dispatch
import Glibc
import SessionJournal

/// One libpq connection, driven without blocking a thread: after `start()` it is in non-blocking pipeline mode, its
/// socket is watched by a DispatchSource read source (and a write source while libpq has output it could not send),
/// and `run(_:completion:)` sends a list of prepared statements followed by one Sync, so that PostgreSQL runs them
/// in one implicit transaction that the Sync commits (or rolls back whole at the first error). The completion gets
/// one `PostgresOutcome` per statement once the Sync's result arrived, that is after the commit.
///
/// Before `start()` the connection is used synchronously (`execute`, `prepare`) on the opening thread: the schema and
/// the prepared statements are set up there.
///
/// Concurrency: after `start()` owned by `queue`; every method runs there and every source handler runs there. One
/// `run` at a time (`isBusy`). libpq owns the socket and may close it by itself (at the connection's end); the sources
/// watch a duplicate of it, closed with `PQfinish` only after both sources' cancel handlers ran. A run that has no
/// answer within `answerTimeout` (the server stopped, the network dropped the connection without a reset) fails as if
/// the socket had broken: the watchdog, a timer on `queue` while the connection is started, looks every half of it.
final class PostgresConnection {
    /// A prepared statement by name and its parameters in text format (nil is SQL NULL).
    struct Statement {
        var name: String
        var parameters: [String?]
    }

    private let queue: DispatchQueue
    private var connection: OpaquePointer?
    private var readSource: (any DispatchSourceRead)?
    private var writeSource: (any DispatchSourceWrite)?
    private var writing = false
    private var watchdog: (any DispatchSourceTimer)?
    private let answerTimeout: Duration
    private var liveSources = 0
    /// The duplicate of libpq's socket that the sources watch (-1 before `start()`); closed after both are cancelled.
    private var watched: Int32 = -1
    private var current: Job?

    private struct Job {
        var outcomes: [PostgresOutcome] = []
        var expected: Int
        /// A statement's first result arrived and its terminating null has not.
        var inStatement = false
        /// When the run was sent (`DispatchTime` nanoseconds).
        var started: UInt64
        var completion: (Result<[PostgresOutcome], JournalError>) -> Void
    }

    /// Connects synchronously (at most `connect_timeout` seconds, from `parameters` or libpq's default) with
    /// `parameters` as libpq keywords and values (`dbname` may be a `postgres://` URL). After `start()`, a run that
    /// waits longer than `answerTimeout` for its answer breaks the connection.
    init(
        parameters: [(String, String)],
        queue: DispatchQueue,
        answerTimeout: Duration = .seconds(10)
    ) throws(JournalError) {
        self.queue = queue
        self.answerTimeout = answerTimeout
        let keywords = parameters.map { strdup($0.0) } + [nil]
        let values = parameters.map { strdup($0.1) } + [nil]
        defer {
            for pointer in keywords + values { free(pointer) }
        }
        let made = keywords.withUnsafeBufferPointer { keys in
            values.withUnsafeBufferPointer { vals in
                keys.withMemoryRebound(to: UnsafePointer<CChar>?.self) { keys in
                    vals.withMemoryRebound(to: UnsafePointer<CChar>?.self) { vals in
                        PQconnectdbParams(keys.baseAddress, vals.baseAddress, 1)
                    }
                }
            }
        }
        guard let made else { throw JournalError(.postgres, "libpq could not allocate a connection") }
        guard PQstatus(made) == CONNECTION_OK else {
            let message = Self.message(of: made)
            PQfinish(made)
            throw JournalError(.postgres, "cannot connect to PostgreSQL: \(message)")
        }
        fh_pq_silence_notices(made)
        connection = made
    }

    /// Runs `sql` (one or more statements) synchronously; before `start()` only. Returns the last result's rows.
    @discardableResult
    func execute(_ sql: String) throws(JournalError) -> [[String?]] {
        guard let connection else { throw JournalError(.closed, "the PostgreSQL connection is closed") }
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        let outcome = PostgresOutcome(result, connection: connection)
        if let error = outcome.error { throw error }
        return outcome.rows
    }

    /// Prepares `sql` under `name`; before `start()` only.
    func prepare(_ name: String, _ sql: String) throws(JournalError) {
        guard let connection else { throw JournalError(.closed, "the PostgreSQL connection is closed") }
        let result = PQprepare(connection, name, sql, 0, nil)
        defer { PQclear(result) }
        if let error = PostgresOutcome(result, connection: connection).error {
            throw JournalError(error.code, "preparing \(name): \(error.message)")
        }
    }

    /// Switches to non-blocking pipeline mode and starts watching the socket; call on `queue`.
    func start() throws(JournalError) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let connection else { throw JournalError(.closed, "the PostgreSQL connection is closed") }
        guard PQsetnonblocking(connection, 1) == 0, PQenterPipelineMode(connection) == 1 else {
            throw JournalError(.postgres, "cannot enter pipeline mode: \(Self.message(of: connection))")
        }
        // The sources watch a duplicate of libpq's socket: libpq closes its own descriptor by itself when it meets the
        // end of the connection, even inside a send (after a failed write it reads what the server said last), and a
        // source on a closed descriptor gets no event again (epoll forgets it), which left a run in flight for good.
        // The duplicate keeps the socket open, and readable at its end, until both sources are cancelled.
        let fd = dup(PQsocket(connection))
        guard fd >= 0 else {
            throw JournalError(.postgres, "cannot watch the PostgreSQL socket: \(String(cString: strerror(errno)))")
        }
        watched = fd
        let read = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        read.setEventHandler { [unowned self] in readable() }
        // Strong: the connection lives until both cancel handlers ran and libpq closed the socket.
        read.setCancelHandler { [self] in sourceCancelled() }
        let write = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        write.setEventHandler { [unowned self] in flush() }
        write.setCancelHandler { [self] in sourceCancelled() }
        liveSources = 2
        readSource = read
        writeSource = write
        read.resume()
        // The write source stays suspended until libpq has output it could not send.
        let every = DispatchTimeInterval.nanoseconds(Int(Self.nanoseconds(answerTimeout) / 2))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + every, repeating: every)
        timer.setEventHandler { [weak self] in self?.watch() }
        watchdog = timer
        timer.resume()
    }

    /// The watchdog's tick: a run waiting longer than `answerTimeout` breaks the connection.
    private func watch() {
        guard let job = current else { return }
        let waited = DispatchTime.now().uptimeNanoseconds - job.started
        guard waited > Self.nanoseconds(answerTimeout) else { return }
        current = nil
        job.completion(
            .failure(
                JournalError(.postgres, "PostgreSQL did not answer within \(answerTimeout); the connection is dropped")
            )
        )
        close()
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(seconds, 0)) * 1_000_000_000 + UInt64(max(attoseconds, 0) / 1_000_000_000)
    }

    /// Whether a `run` is in flight.
    var isBusy: Bool { current != nil }

    /// Whether the connection is usable (it is not after a socket error or after `close()`).
    var isUsable: Bool {
        guard let connection, readSource != nil else { return false }
        return PQstatus(connection) == CONNECTION_OK
    }

    /// Sends `statements` and a Sync; `completion` runs on `queue` with one outcome per statement once the Sync's
    /// result arrived (the implicit transaction then committed, or was rolled back at the first failed statement),
    /// or with the error that broke the connection.
    func run(
        _ statements: [Statement],
        completion: @escaping (Result<[PostgresOutcome], JournalError>) -> Void
    ) {
        dispatchPrecondition(condition: .onQueue(queue))
        precondition(current == nil, "one pipeline at a time")
        guard let connection, readSource != nil else {
            return completion(.failure(JournalError(.closed, "the PostgreSQL connection is closed")))
        }
        for statement in statements {
            let values = statement.parameters.map { $0.map { strdup($0) } ?? nil }
            defer {
                for value in values { free(value) }
            }
            let sent = values.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { pointers in
                    PQsendQueryPrepared(
                        connection,
                        statement.name,
                        Int32(pointers.count),
                        pointers.baseAddress,
                        nil,
                        nil,
                        0
                    )
                }
            }
            guard sent == 1 else { return fail(completion) }
        }
        guard PQpipelineSync(connection) == 1 else { return fail(completion) }
        current = Job(expected: statements.count, started: DispatchTime.now().uptimeNanoseconds, completion: completion)
        flush()
    }

    /// Cancels the sources; the socket is closed (`PQfinish`) once both cancel handlers ran. A run in flight fails.
    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        if let job = current {
            current = nil
            job.completion(.failure(JournalError(.closed, "the PostgreSQL connection was closed")))
        }
        guard let read = readSource, let write = writeSource else {
            // Never started, or closed already (then the last cancel handler finishes the connection).
            if liveSources == 0, let connection { PQfinish(connection) }
            if liveSources == 0 { connection = nil }
            return
        }
        readSource = nil
        writeSource = nil
        watchdog?.cancel()
        watchdog = nil
        read.cancel()
        if !writing { write.resume() }  // a suspended source never runs its cancel handler
        write.cancel()
    }

    private func sourceCancelled() {
        liveSources -= 1
        guard liveSources == 0 else { return }
        if watched >= 0 {
            Glibc.close(watched)
            watched = -1
        }
        if let connection {
            PQfinish(connection)
            self.connection = nil
        }
    }

    private func fail(_ completion: (Result<[PostgresOutcome], JournalError>) -> Void) {
        let message = connection.map(Self.message(of:)) ?? "closed"
        completion(.failure(JournalError(.postgres, "PostgreSQL connection failed: \(message)")))
    }

    /// Sends what libpq holds; the write source runs while some is left.
    private func flush() {
        guard let connection else { return }
        switch PQflush(connection) {
        case 0:
            if writing {
                writing = false
                writeSource?.suspend()
            }
        case 1:
            if !writing {
                writing = true
                writeSource?.resume()
            }
        default:
            return broken()
        }
        // A failed write makes libpq read what the server said last, and it may meet the connection's end there.
        if PQstatus(connection) != CONNECTION_OK { broken() }
    }

    /// Reads until the socket has nothing more to give: libdispatch reports a hang-up (the server's reset) once and
    /// then stops watching the descriptor, so what arrived with it, and the end behind it, must be read now.
    private func readable() {
        guard let connection else { return }
        repeat {
            guard PQconsumeInput(connection) == 1 else { return broken() }
            if writing { flush() }
            drain(connection)
        } while readSource != nil && mayRead()
    }

    /// Whether a read would not block: bytes are waiting, or the end of the connection, or an error.
    private func mayRead() -> Bool {
        var byte: UInt8 = 0
        let peeked = recv(watched, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return peeked >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// Takes every result libpq has complete; finishes the job at the Sync's result.
    private func drain(_ connection: OpaquePointer) {
        results: while current != nil, PQisBusy(connection) == 0 {
            guard let result = PQgetResult(connection) else {
                if current?.inStatement == true {
                    current?.inStatement = false
                    continue
                }
                // Nothing more until more input arrives, unless libpq met the connection's end while reading: a
                // FATAL error from a terminated backend makes the pipeline abort here, and no input follows.
                break results
            }
            let status = PQresultStatus(result)
            if status == PGRES_PIPELINE_SYNC {
                PQclear(result)
                let job = current!
                current = nil
                if job.outcomes.count == job.expected {
                    job.completion(.success(job.outcomes))
                } else {
                    job.completion(
                        .failure(
                            JournalError(
                                .postgres,
                                "PostgreSQL answered \(job.outcomes.count) of \(job.expected) statements"
                            )
                        )
                    )
                }
                return
            }
            if current?.inStatement == false {
                current?.outcomes.append(PostgresOutcome(result, connection: connection))
                current?.inStatement = true
            }
            PQclear(result)
        }
        if PQstatus(connection) != CONNECTION_OK { broken() }
    }

    /// The socket failed (the server went away, the network broke): the run in flight fails, and the sources are
    /// cancelled (a socket at end of file stays readable, so a live read source would fire without end).
    private func broken() {
        if let job = current {
            current = nil
            fail(job.completion)
        }
        close()
    }

    static func message(of connection: OpaquePointer) -> String {
        guard let text = PQerrorMessage(connection) else { return "unknown error" }
        return String(cString: text).trimmingSuffix()
    }
}

/// What one statement of a pipeline gave: its rows in text format, or its error.
struct PostgresOutcome {
    /// The rows (nil cells are SQL NULL); empty for a statement without rows.
    var rows: [[String?]] = []
    /// Rows a command touched (`PQcmdTuples`), 0 when it says nothing.
    var affected = 0
    /// The statement failed, or did not run because an earlier one of its pipeline failed.
    var error: JournalError?

    /// An outcome of `rows`, as a statement that succeeded would give.
    init(rows: [[String?]]) {
        self.rows = rows
    }

    init(_ result: OpaquePointer?, connection: OpaquePointer) {
        guard let result else {
            error = JournalError(.postgres, PostgresConnection.message(of: connection))
            return
        }
        let status = PQresultStatus(result)
        switch status {
        case PGRES_TUPLES_OK, PGRES_SINGLE_TUPLE:
            let columns = PQnfields(result)
            for row in 0..<PQntuples(result) {
                var values: [String?] = []
                values.reserveCapacity(Int(columns))
                for column in 0..<columns {
                    values.append(
                        PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
                    )
                }
                rows.append(values)
            }
        case PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        case PGRES_PIPELINE_ABORTED:
            error = JournalError(.postgres, "not run: an earlier statement of the transaction failed")
        default:
            let text = PQresultErrorMessage(result).map { String(cString: $0).trimmingSuffix() } ?? "unknown error"
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            // Class 53: insufficient resources; 53100 is disk_full.
            error = JournalError(state == "53100" ? .full : .postgres, text.isEmpty ? "\(status)" : text)
        }
    }
}

extension String {
    fileprivate func trimmingSuffix() -> String {
        var text = Substring(self)
        while let last = text.last, last == "\n" || last == " " { text.removeLast() }
        return String(text)
    }
}
