internal import CSQLite
import FeedbackJSON

/// Writes a group commit's events into `events` several rows per `INSERT`. Each statement execution has a fixed cost
/// apart from its rows (its cursors, and `AUTOINCREMENT`'s read and rewrite of `sqlite_sequence`, each a few
/// allocations, since Debian's SQLite is built without its lookaside allocator): about 1.2 µs here, as much as a
/// row's own insert. So the consecutive events of a commit are written `chunkSizes` rows at a time, the largest
/// chunks first, in their order (`seq` follows the `VALUES` order).
///
/// The rows' texts (the session id and the event's JSON) are copied into one byte buffer kept across commits and
/// bound in place (no copy per text, no allocation per row once the buffer has grown), and unbound once the statement
/// is reset, so that no binding outlives the buffer's contents.
///
/// Concurrency: used only by its store's owner (the journal's writer queue).
final class EventRows {
    /// Rows per statement, largest first; the last is 1.
    static let chunkSizes = [16, 4, 1]
    static let columns: Int32 = 9

    private let statements: [SQLiteStatement]
    /// The texts of the rows being written, and where each row's two start.
    @exclusivity(unchecked)  // one queue (above): no dynamic check a row
    private var texts: [UInt8] = []
    @exclusivity(unchecked)
    private var spans: [(session: Range<Int>, event: Range<Int>)] = []

    init(connection: SQLiteConnection) throws(JournalError) {
        var statements: [SQLiteStatement] = []
        for size in Self.chunkSizes {
            statements.append(try connection.prepare(Self.insert(rows: size)))
        }
        self.statements = statements
    }

    /// `INSERT OR FAIL INTO events(...) VALUES(?1, ..., ?9), (?10, ..., ?18), ...`: row `k`'s column `c` is parameter
    /// `9k + c`. `OR FAIL`: a statement of several rows that could abort half-way would make SQLite copy every page it
    /// changes into a statement journal (into a temporary file once one has spilled past 64 KiB); a commit
    /// is rolled back whole when any of its statements fails, so none is needed.
    static func insert(rows: Int) -> String {
        let values = (0..<rows).map { row in
            "(" + (1...Int(columns)).map { "?\(row * Int(columns) + $0)" }.joined(separator: ", ") + ")"
        }
        return "INSERT OR FAIL INTO events(session, rev, origin, event, crc, version, at, state_sum, feedback) VALUES"
            + values.joined(separator: ", ")
    }

    /// Writes the `.event` records of `records` at `indices` (consecutive in the commit, in order).
    func write(_ records: [JournalRecord], at indices: Range<Int>) throws(JournalError) {
        var start = indices.lowerBound
        while start < indices.upperBound {
            let left = indices.upperBound - start
            let chunk = Self.chunkSizes.firstIndex { $0 <= left }!
            let size = Self.chunkSizes[chunk]
            try write(records, at: start..<start + size, with: statements[chunk])
            start += size
        }
    }

    private func write(
        _ records: [JournalRecord],
        at indices: Range<Int>,
        with statement: SQLiteStatement
    ) throws(JournalError) {
        texts.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
        for index in indices {
            guard case .event(let id, let revision, let event, let origin, let stamp) = records[index] else {
                preconditionFailure("EventRows writes event records only")
            }
            let row = Int32(spans.count) * Self.columns
            let session = append(id)
            let text = append(event.utf8)
            spans.append((session, text))
            statement.bind(row + 2, Int64(bitPattern: revision))
            statement.bind(row + 3, Int64(origin.rawValue))
            statement.bind(row + 5, RecordChecksum.event(id, revision, origin.rawValue, event, stamp))
            statement.bind(row + 6, Int64(stamp.version))
            statement.bind(row + 7, stamp.time)
            statement.bind(row + 8, stamp.stateChecksum.map { Int64(bitPattern: $0) })
            statement.bind(row + 9, stamp.feedback)
        }
        // A byte past the texts: the buffer is never empty, so an empty text is bound as '' (a pointer), not NULL.
        texts.append(0)
        try statement.run(bindingIn: texts) { bind in
            for (row, span) in spans.enumerated() {
                let base = Int32(row) * Self.columns
                bind(base + 1, span.session)
                bind(base + 4, span.event)
            }
        }
    }

    private func append(_ bytes: [UInt8]) -> Range<Int> {
        let start = texts.count
        // Through a buffer pointer: `append(contentsOf:)` takes an array as its own (a retain and a release).
        bytes.withUnsafeBufferPointer { texts.append(contentsOf: $0) }
        return start..<texts.count
    }

    private func append(_ text: String) -> Range<Int> {
        let start = texts.count
        text.withUTF8Bytes { texts.append(contentsOf: $0) }
        return start..<texts.count
    }

    func finalize() {
        for statement in statements { statement.finalize() }
    }
}
