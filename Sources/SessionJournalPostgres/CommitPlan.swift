import SessionJournal

/// The statements of one group commit: one per record, except that a run of event records (one per post, from many
/// sessions, the bulk of a busy commit) goes as one call of `fh_events` with arrays, which refuses element by element.
/// Remembers which append each statement's records came from, to tell the refused (fenced) appends from the others.
///
/// Concurrency: a value, built and read on the journal's queue.
struct CommitPlan {
    private(set) var statements: [PostgresConnection.Statement] = []
    /// Per statement: the append of each of its records, in order.
    private var appends: [[Int]] = []
    private var run: [(append: Int, parameters: [String?])] = []

    /// Adds the statement of one record of append number `append`; event records are gathered into runs.
    mutating func add(_ statement: PostgresConnection.Statement, of append: Int) {
        if statement.name == "event" {
            run.append((append, statement.parameters))
            return
        }
        flush()
        statements.append(statement)
        appends.append([append])
    }

    /// Ends the plan: the last run of events becomes a statement.
    mutating func finish() { flush() }

    private mutating func flush() {
        guard !run.isEmpty else { return }
        defer { run = [] }
        if run.count == 1 {
            statements.append(.init(name: "event", parameters: run[0].parameters))
            appends.append([run[0].append])
            return
        }
        // fh_event's parameters are session, owner, rev, origin, event, crc, version, at, state_sum, feedback: one
        // array of each.
        let width = run.map(\.parameters.count).max() ?? 0
        let columns = (0..<width).map { column in
            Self.array(run.map { column < $0.parameters.count ? $0.parameters[column] : nil })
        }
        statements.append(.init(name: "events", parameters: columns))
        appends.append(run.map(\.append))
    }

    /// The appends a statement refused: a single record's statement answers false, `fh_events` the 1-based positions
    /// of the elements it refused.
    func refused(_ outcomes: [PostgresOutcome]) -> Set<Int> {
        var refused: Set<Int> = []
        for (index, outcome) in outcomes.enumerated() {
            guard let value = outcome.rows.first?.first ?? nil else { continue }
            if statements[index].name == "events" {
                for position in value.dropFirst().dropLast().split(separator: ",") {
                    if let position = Int(position) { refused.insert(appends[index][position - 1]) }
                }
            } else if value == "f" {
                refused.insert(appends[index][0])
            }
        }
        return refused
    }

    /// A PostgreSQL array literal: each element quoted (backslash and quote escaped), NULL for nil. Built as UTF-8
    /// bytes: the two escaped characters are ASCII, so they never occur inside a multi-byte character.
    static func array(_ values: [String?]) -> String {
        let quote = UInt8(ascii: "\"")
        let backslash = UInt8(ascii: "\\")
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(values.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            guard let value else {
                bytes.append(contentsOf: "NULL".utf8)
                continue
            }
            bytes.append(quote)
            for byte in value.utf8 {
                if byte == backslash || byte == quote { bytes.append(backslash) }
                bytes.append(byte)
            }
            bytes.append(quote)
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
