import ConformanceChecks
import CurlClient
import Foundation
import PostgresFixture
import Testing
import Upstream

/// The journal a test server runs with: SQLite in a data directory, or PostgreSQL (a fresh database on the test
/// process's private server, `--journal-url`). For tests that hold for both.
enum ServiceJournal: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// A fresh journal's flags; every server started with them (a restart, a second replica) shares the journal.
    func place() throws -> JournalFlags {
        switch self {
        case .sqlite:
            let directory = TemporaryDataDirectory()
            return JournalFlags(flags: ["--data-dir", directory.path], directory: directory)
        case .postgres:
            return JournalFlags(flags: ["--journal-url", try PostgresServer.makeDatabase()], directory: nil)
        }
    }
}

/// A journal's server flags and what to remove after the test.
struct JournalFlags {
    let flags: [String]
    let directory: TemporaryDataDirectory?

    func remove() { directory?.remove() }
}

extension SessionAPIClient {
    /// A POST of one `{"type":"increment"}` with an `Idempotency-Key`; the answer as it came.
    func postIncrement(_ id: String, key: String) async throws -> UpstreamResponse {
        try await client.fetch(
            UpstreamRequest(
                method: "POST",
                url: "\(base)/v1/sessions/\(id)/events",
                headers: ["Content-Type": "application/json", "Idempotency-Key": key],
                body: Array(#"{"type":"increment"}"#.utf8),
                totalTimeoutMilliseconds: 10_000
            )
        )
    }
}
