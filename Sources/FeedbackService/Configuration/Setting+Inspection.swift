import SessionJournal

/// The settings of inspection (issue 32): how much history the journal keeps, and whether the inspection routes
/// answer at all.
extension Setting {
    static let historyRetention = Setting(
        "history.retention",
        .text,
        default: "",
        "history kept per session for inspection, verify and export: forever, events:N, age:D (D such as 30d, 12h, "
            + "90m, 45s) or snapshots:N; a system's own declaration comes first; empty: journal.history.snapshots",
        check: { value in
            value.isEmpty || HistoryRetention(parsing: value) != nil
                ? nil : "forever, events:N, age:D (a number and ms, s, m, h or d) or snapshots:N"
        }
    )
    static let inspector = Setting(
        "inspector",
        .choice(["auto", "on", "off"]),
        default: "auto",
        "the inspection routes (history, states, diffs, the list of sessions): auto is on at a loopback --host and off "
            + "elsewhere; they need the inspect scope with --auth jwt"
    )

    static let journalTimelineRows = Setting(
        "journal.timeline.rows",
        .integer(0...1_000_000),
        default: "2500",
        "SQLite: rows of the event log the history index (timeline) takes in per background tick (every 125 ms); 0 "
            + "takes in none, for measuring what the index costs (history reads then scan the unindexed log)"
    )

    /// The settings above.
    static let inspection: [Setting] = [historyRetention, inspector, journalTimelineRows]
}
