import Foundation
import PostgresFixture
import Synchronization
import Testing

@testable import SessionJournal
@testable import SessionJournalPostgres

/// The two journals behind `SessionJournaling`, for parameterized tests.
enum JournalBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    var testDescription: String { rawValue }
}

/// Where one test's journal lives: a temporary data directory (SQLite) or a fresh database on the test process's
/// private PostgreSQL server. `open` may be called again after a `close`, as a restart (or another replica) would.
struct JournalPlace {
    let backend: JournalBackend
    let directory: TemporaryDirectory?
    let url: String?

    init(_ backend: JournalBackend) throws {
        self.backend = backend
        switch backend {
        case .sqlite:
            directory = TemporaryDirectory()
            url = nil
        case .postgres:
            directory = nil
            url = try PostgresServer.makeDatabase()
        }
    }

    func open(_ configuration: JournalConfiguration = .init()) throws -> any SessionJournaling {
        switch backend {
        case .sqlite:
            try Journal.open(directory: directory!.path, configuration: configuration, logger: JournalFixtures.logger)
        case .postgres:
            try PostgresJournal.open(url: url!, configuration: configuration, logger: JournalFixtures.logger)
        }
    }

    /// Changes stored rows behind the journal's back (a damaged record): `sqlite` on SQLite's tables through the open
    /// journal, `postgres` on PostgreSQL's through psql.
    func tamper(_ journal: any SessionJournaling, sqlite: String, postgres: String) throws {
        switch backend {
        case .sqlite:
            try (journal as! Journal).withStore { store throws(JournalError) in
                try store.connection.execute(sqlite)
            }
        case .postgres:
            _ = try PostgresServer.shared().psql(url!, postgres)
        }
    }

    /// Holds the journal's queue (as a long commit or a stalled process would) until `release` is signalled; returns
    /// once it is held.
    func hold(_ journal: any SessionJournaling, until release: DispatchSemaphore) {
        let held = DispatchSemaphore(value: 0)
        let queue = (journal as? Journal)?.queue ?? (journal as! PostgresJournal).queue
        queue.async {
            held.signal()
            release.wait()
        }
        held.wait()
    }

    func remove() {
        directory?.remove()
    }
}

extension SessionJournaling {
    /// `confirmOwnership`, blocking until it answered.
    func confirmsOwnership(of id: String) throws -> Bool {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Bool, JournalError>?>(nil)
        confirmOwnership(of: id) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        try Self.await(done, "an ownership check")
        return try outcome.withLock { $0! }.get()
    }

    /// Appends and blocks until the completion ran.
    func appendAndWait(_ records: [JournalRecord]) throws {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Void, JournalError>?>(nil)
        append(records) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        try Self.await(done, "an append")
        try outcome.withLock { $0! }.get()
    }

    /// Waits for `done`, at most a minute: a journal that never answers fails its test instead of hanging the run.
    private static func await(_ done: DispatchSemaphore, _ what: String) throws(JournalError) {
        guard done.wait(timeout: .now() + .seconds(60)) == .success else {
            throw JournalError(.postgres, "the journal did not answer \(what) within 60 s")
        }
    }
}

extension Journal {
    /// Runs `body` while the writer queue is held, as a long commit would hold it: what `body` appends waits, and
    /// goes into the commit that starts once it returns.
    func whileWriterHeld<T>(_ body: () throws -> T) rethrows -> T {
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? self.withStore { _ in
                held.signal()
                release.wait()
            }
        }
        held.wait()
        defer { release.signal() }
        return try body()
    }
}
