import Foundation
import Testing

@testable import SessionJournal

@Suite("SQLiteStatement")
struct SQLiteStatementTests {
    /// `run(binding:and:)` binds its two texts without a copy, so it must unbind them before it returns: a statement
    /// that has stepped refuses bindings until it is reset, and unbinding before the reset left the pointers bound
    /// (and SQLite reporting a misuse on every journaled event).
    @Test func textsBoundInPlaceAreUnboundOnceTheRowIsWritten() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stmt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try SQLiteConnection(path: directory.appendingPathComponent("t.sqlite").path)
        defer { connection.close() }
        try connection.execute("CREATE TABLE t(a TEXT, n INTEGER, b TEXT)")
        let insert = try connection.prepare("INSERT INTO t(a, n, b) VALUES(?1, ?2, ?3)")
        defer { insert.finalize() }
        for n in 1...2 {
            insert.bind(2, Int64(n))
            try insert.run(binding: 1, "first text \(n)", and: 3, "second text \(n)")
            #expect(insert.expandedSQL == "INSERT INTO t(a, n, b) VALUES(NULL, \(n), NULL)")
        }
        let rows = try connection.texts("SELECT a || '/' || n || '/' || b FROM t ORDER BY n")
        #expect(rows == ["first text 1/1/second text 1", "first text 2/2/second text 2"])
    }
}
