internal import CSQLite
import Foundation

/// Opens the journal file, checks it, and when SQLite rejects it (open fails, not a database, `quick_check`
/// reports damage) moves it aside and salvages what still reads into a fresh file.
///
/// The decision for a damaged main file: never write into it again. It is renamed with its `-wal` and `-shm`
/// files to `<name>.corrupt-<unix time>` (kept for inspection), a new journal is created, and every row that
/// SQLite can still read from each table is copied over: a forward scan in key order until the first error,
/// then a backward scan until the first error, so only the rows on unreadable pages are lost. The copied rows
/// keep their checksums; recovery then keeps each session's records up to its first bad or missing one.
///
/// Concurrency: runs on the thread that calls `Journal.open`, before the writer queue exists.
enum JournalOpener {
    static func open(
        directory: String,
        configuration: JournalConfiguration,
        problems: inout [String]
    ) throws(JournalError) -> (store: JournalStore, lock: DataDirectoryLock, movedAside: String?) {
        try makeDirectory(directory)
        // Taken before the file is read: another server may be writing it.
        let lock = try DataDirectoryLock(directory: directory)
        let path = directory + "/" + configuration.fileName
        let vfs = configuration.vfs
        if let failure = check(path, configuration: configuration) {
            let aside = path + ".corrupt-\(Int(Date().timeIntervalSince1970))"
            problems.append("journal \(path) failed SQLite's checks (\(failure)); moved to \(aside)")
            try moveAside(path, to: aside)
            let store = try JournalStore(
                connection: SQLiteConnection(path: path, vfs: vfs),
                configuration: configuration
            )
            salvage(from: aside, into: store.connection, problems: &problems)
            return (store, lock, aside)
        }
        let store = try JournalStore(connection: SQLiteConnection(path: path, vfs: vfs), configuration: configuration)
        return (store, lock, nil)
    }

    /// Nil when the file opens as a database and passes `quick_check` (or does not exist yet).
    private static func check(_ path: String, configuration: JournalConfiguration) -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            let connection = try SQLiteConnection(path: path, vfs: configuration.vfs)
            defer { connection.close() }
            // Reading the schema reads the header and page 1: "file is not a database" shows here.
            _ = try connection.integer("SELECT count(*) FROM sqlite_schema")
            guard configuration.checkOnOpen else { return nil }
            let report = try connection.texts("PRAGMA quick_check")
            return report == ["ok"] ? nil : report.prefix(3).joined(separator: "; ")
        } catch {
            return error.message
        }
    }

    private static func makeDirectory(_ directory: String) throws(JournalError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw JournalError(.directory, "\(directory) is not a directory") }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw JournalError(.directory, "cannot create \(directory): \(error)")
        }
    }

    private static func moveAside(_ path: String, to aside: String) throws(JournalError) {
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            guard rename(path + suffix, aside + suffix) == 0 else {
                throw JournalError(.directory, "cannot move \(path + suffix) aside: errno \(errno)")
            }
        }
    }

    /// Copies every readable row of every table from the damaged file into `target`, in one transaction.
    private static func salvage(from damaged: String, into target: SQLiteConnection, problems: inout [String]) {
        let source: SQLiteConnection
        do {
            source = try SQLiteConnection(path: damaged)
        } catch {
            problems.append("salvage: \(error.message); nothing recovered")
            return
        }
        defer { source.close() }
        do {
            try target.execute("BEGIN IMMEDIATE")
            // The fresh file's mark says its (no) answers are of today's fingerprints; the damaged file's answers
            // bring their own mark, or none, and are adopted below.
            try target.execute("DELETE FROM meta WHERE name = '\(JournalSchema.fingerprintSchemeName)'")
            for table in JournalSchema.tables {
                var copied = 0
                var errors: [String] = []
                for order in ["ASC", "DESC"] {
                    let keys = table.key.split(separator: ",").map { "\($0) \(order)" }.joined(separator: ",")
                    do {
                        let scan = try source.prepare("SELECT * FROM \(table.name) ORDER BY \(keys)")
                        defer { scan.finalize() }
                        // A file of an older version has fewer columns: the rest take their defaults.
                        let count = min(scan.columnCount, Int32(table.columns.count))
                        let names = table.columns.prefix(Int(count)).joined(separator: ", ")
                        let placeholders = (1...count).map { "?\($0)" }.joined(separator: ", ")
                        let insert = try target.prepare(
                            "INSERT OR REPLACE INTO \(table.name)(\(names)) VALUES(\(placeholders))"
                        )
                        defer { insert.finalize() }
                        while try scan.step() {
                            scan.copyColumns(count, to: insert)
                            try insert.run()
                            copied += 1
                        }
                        if order == "ASC" { break }  // a full forward scan read everything
                    } catch {
                        errors.append(error.message)
                    }
                }
                problems.append(
                    "salvage: \(table.name): \(copied) rows copied"
                        + (errors.isEmpty ? "" : " (stopped at: \(errors.joined(separator: "; ")))")
                )
            }
            try JournalStore.adoptKeyedFingerprints(target)
            try target.execute("COMMIT")
        } catch {
            try? target.execute("ROLLBACK")
            problems.append("salvage: \(error.message); nothing recovered")
        }
    }
}
