/// The settings of schema versions and verification: how much history the journal keeps, and whether the server
/// verifies its journal before it takes traffic.
extension Setting {
    static let journalHistorySnapshots = Setting(
        "journal.history.snapshots",
        .integer(0...1000),
        default: "2",
        "snapshots kept per session (the initial state counts) with the events between them, for verify and export; "
            + "0: only the latest"
    )
    static let journalStateChecksums = Setting(
        "journal.state.checksums",
        .boolean,
        default: "true",
        "journal with each event the checksum of the state it produced (one state encoding per event), so that verify "
            + "and exports name the first revision that differs; false: only kept snapshots are compared"
    )
    static let verifyOnStart = Setting(
        "verify.on.start",
        .boolean,
        default: "false",
        "replay the journal through this build before taking traffic: /readyz is 503 until it passes"
    )
    static let verifyMaxDivergent = Setting(
        "verify.max.divergent",
        .integer(0...Int.max),
        default: "0",
        "with verify.on.start: diverged or failed sessions tolerated; past it /readyz stays 503"
    )

    /// The settings above.
    static let versions: [Setting] = [
        journalHistorySnapshots, journalStateChecksums, verifyOnStart, verifyMaxDivergent,
    ]
}
