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
/// The table holds no reference-counted value per session: the ids' bytes lie one after another in one array, the
/// cutoffs in an array of plain structs, found through an open-addressed table of their indices, so a row costs no
/// retain or release (a dictionary of arrays of structs holding arrays cost 70 a row, about a third of a tick's user
/// time, session 25).
///
/// Concurrency: used only by its store's owner (the journal's writer queue), inside the statement SQLite runs there.
final class CompactionCutoffs {
    static let functionName = "fh_compactable"
    /// The session's cutoff revision and generation (`Int64.max` when the session is gone: no row is its current
    /// incarnation's), and where its id's bytes lie in `ids`.
    private struct Cutoff {
        var hash: Int
        var start: Int
        var count: Int
        var revision: Int64
        var generation: Int64
    }

    /// The ids' bytes of `cutoffs`, one after another.
    @exclusivity(unchecked)  // one queue (above): no dynamic check a row
    private var ids: [UInt8] = []
    @exclusivity(unchecked)
    private var cutoffs: [Cutoff] = []
    /// Open addressing over `cutoffs`: an index + 1 per slot, 0 for an empty one; a power of two long, at most half
    /// full.
    @exclusivity(unchecked)
    private var slots = [Int32](repeating: 0, count: 64)
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
        guard !cutoffs.isEmpty else { return }
        ids.removeAll(keepingCapacity: true)
        cutoffs.removeAll(keepingCapacity: true)
        slots.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
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

    private func cutoff(of session: UnsafeRawBufferPointer) throws(JournalError) -> Cutoff {
        var hasher = Hasher()
        hasher.combine(bytes: session)
        let hash = hasher.finalize()
        let mask = slots.count - 1
        var slot = hash & mask
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { break }
            let cutoff = cutoffs[entry - 1]
            if cutoff.hash == hash, holds(cutoff, session) { return cutoff }
            slot = (slot + 1) & mask
        }
        lookup.bind(1, text: session)
        defer {
            lookup.reset()
            lookup.clearBindings()
        }
        guard try lookup.step() else { throw JournalError(.sqlite, "\(Self.functionName): no cutoff row") }
        let cutoff = Cutoff(
            hash: hash,
            start: ids.count,
            count: session.count,
            revision: lookup.int64(0),
            generation: lookup.isNull(1) ? Int64.max : lookup.int64(1)
        )
        ids.append(contentsOf: session)
        cutoffs.append(cutoff)
        slots[slot] = Int32(cutoffs.count)
        if cutoffs.count * 2 > slots.count { grow() }
        return cutoff
    }

    /// Whether `cutoff` is the one of the session whose id is `session`.
    private func holds(_ cutoff: Cutoff, _ session: UnsafeRawBufferPointer) -> Bool {
        guard cutoff.count == session.count else { return false }
        guard session.count > 0 else { return true }
        return ids.withUnsafeBytes { memcmp($0.baseAddress! + cutoff.start, session.baseAddress!, session.count) == 0 }
    }

    /// Twice as many slots, every cutoff placed again.
    private func grow() {
        slots = [Int32](repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for index in cutoffs.indices {
            var slot = cutoffs[index].hash & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(index + 1)
        }
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
    let text = sqlite3_value_text(arguments[0])
    let session = UnsafeRawBufferPointer(start: text, count: Int(sqlite3_value_bytes(arguments[0])))
    // The store holds the cutoffs for as long as its connection: no retain for the call.
    Unmanaged<CompactionCutoffs>.fromOpaque(owner)._withUnsafeGuaranteedRef { cutoffs in
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
}
