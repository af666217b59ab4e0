internal import CSQLite
import Glibc

/// Compaction's test of one row of the log, as an SQL function of the writer's connection
/// (`fh_compactable(session, rev, seq)`, used by `JournalSchema.compactRange`): whether recovery and verification can
/// do without the event, because its session's oldest kept snapshot covers it (the latest snapshot when the session
/// keeps no history) or because its session is gone or was created again after it.
///
/// Written in SQL, the test looked up the session's kept history (and its latest snapshot, and the session) for every
/// row: 0.60 µs a row scanned against 0.19 for the delete alone, in a copy of a loaded journal, where a step's rows
/// come from a few sessions each (session 24). Here each session's cutoff is read once per statement and kept in a
/// table by its id's bytes; the rows of a session seen before cost a hash and a comparison.
///
/// A statement's cutoffs hold for that statement only: `reset()` empties them before each run, since the commits in
/// between change snapshots, history and sessions (the statement itself deletes only events).
///
/// Concurrency: used only by its store's owner (the journal's writer queue), inside the statement SQLite runs there.
final class CompactionCutoffs {
    static let functionName = "fh_compactable"
    /// The session's cutoff revision and generation (`Int64.max` when the session is gone: no row is its current
    /// incarnation's).
    private struct Cutoff {
        var session: [UInt8]
        var revision: Int64
        var generation: Int64
    }

    private var buckets: [Int: [Cutoff]] = [:]
    private let lookup: SQLiteStatement

    init(connection: SQLiteConnection) throws(JournalError) {
        lookup = try connection.prepare(
            """
            SELECT coalesce(
                (SELECT min(rev) FROM history WHERE session = ?1), (SELECT rev FROM snapshots WHERE session = ?1), -1),
                (SELECT generation FROM sessions WHERE id = ?1)
            """
        )
        let context = Unmanaged.passUnretained(self).toOpaque()
        let rc = sqlite3_create_function_v2(
            connection.handle,
            Self.functionName,
            3,
            SQLITE_UTF8,
            context,
            compactableRow,
            nil,
            nil,
            nil
        )
        guard rc == SQLITE_OK else {
            lookup.finalize()
            throw JournalError(.sqlite, "cannot register \(Self.functionName): \(connection.errorMessage)")
        }
    }

    /// Forgets every cutoff: before each run of a statement that calls the function.
    func reset() {
        buckets.removeAll(keepingCapacity: true)
    }

    func finalize() {
        lookup.finalize()
    }

    /// Whether the row (`session`'s event at `revision`, at `seq` in the log) can go.
    fileprivate func compactable(
        session: UnsafeRawBufferPointer,
        revision: Int64,
        seq: Int64
    ) throws(JournalError) -> Bool {
        let cutoff = try self.cutoff(of: session)
        return revision <= cutoff.revision || !(cutoff.generation < seq)
    }

    private static func same(_ kept: [UInt8], _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard kept.count == bytes.count else { return false }
        guard let other = bytes.baseAddress else { return true }
        return kept.withUnsafeBytes { memcmp($0.baseAddress!, other, bytes.count) == 0 }
    }

    private func cutoff(of session: UnsafeRawBufferPointer) throws(JournalError) -> Cutoff {
        var hasher = Hasher()
        hasher.combine(bytes: session)
        let hash = hasher.finalize()
        if let found = buckets[hash]?.first(where: { Self.same($0.session, session) }) { return found }
        lookup.bind(1, text: session)
        defer {
            lookup.reset()
            lookup.clearBindings()
        }
        guard try lookup.step() else { throw JournalError(.sqlite, "\(Self.functionName): no cutoff row") }
        let cutoff = Cutoff(
            session: Array(session),
            revision: lookup.int64(0),
            generation: lookup.isNull(1) ? Int64.max : lookup.int64(1)
        )
        buckets[hash, default: []].append(cutoff)
        return cutoff
    }
}

/// `fh_compactable(session, rev, seq)`: 1 when the row can go, 0 when it stays; an error (which fails the statement)
/// when its session's cutoff cannot be read.
private func compactableRow(
    _ context: OpaquePointer?,
    _ count: Int32,
    _ arguments: UnsafeMutablePointer<OpaquePointer?>?
) {
    guard let context, count == 3, let arguments, let owner = sqlite3_user_data(context) else { return }
    let cutoffs = Unmanaged<CompactionCutoffs>.fromOpaque(owner).takeUnretainedValue()
    let text = sqlite3_value_text(arguments[0])
    let session = UnsafeRawBufferPointer(start: text, count: Int(sqlite3_value_bytes(arguments[0])))
    do throws(JournalError) {
        let compactable = try cutoffs.compactable(
            session: session,
            revision: sqlite3_value_int64(arguments[1]),
            seq: sqlite3_value_int64(arguments[2])
        )
        sqlite3_result_int(context, compactable ? 1 : 0)
    } catch {
        sqlite3_result_error(context, error.description, -1)
    }
}
