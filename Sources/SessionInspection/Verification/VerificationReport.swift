import FeedbackJSON

/// What `JournalVerifier` found: counts per system and outcome, and the verdicts of the sessions that diverged or
/// failed (the first of them).
public struct VerificationReport: Sendable, Equatable {
    /// The counts of one system.
    public struct Counts: Sendable, Equatable {
        /// Sessions by outcome.
        public var identical = 0
        public var migrated = 0
        public var diverged = 0
        public var failed = 0
        /// Events reduced.
        public var events = 0

        /// Sessions replayed.
        public var sessions: Int { identical + migrated + diverged + failed }
    }

    /// The sessions the journal holds.
    public var sessionsInJournal: Int
    /// Counts by system name.
    public var systems: [String: Counts] = [:]
    /// Diverged and failed sessions' verdicts, in id order, at most the number asked for.
    public var problems: [SessionVerdict] = []

    /// An empty report of a journal of `sessionsInJournal` sessions.
    public init(sessionsInJournal: Int) {
        self.sessionsInJournal = sessionsInJournal
    }

    /// Every system's counts added up.
    public var total: Counts {
        systems.values.reduce(into: Counts()) { sum, counts in
            sum.identical += counts.identical
            sum.migrated += counts.migrated
            sum.diverged += counts.diverged
            sum.failed += counts.failed
            sum.events += counts.events
        }
    }

    /// Sessions that count against the divergence budget: diverged and failed ones.
    public var divergent: Int { total.diverged + total.failed }

    mutating func add(_ verdict: SessionVerdict, keep: Int) {
        var counts = systems[verdict.system, default: Counts()]
        switch verdict.outcome {
        case .identical: counts.identical += 1
        case .migrated: counts.migrated += 1
        case .diverged: counts.diverged += 1
        case .failed: counts.failed += 1
        }
        counts.events += verdict.events
        systems[verdict.system] = counts
        if verdict.outcome == .diverged || verdict.outcome == .failed, problems.count < keep {
            problems.append(verdict)
        }
    }

    /// The report as lines of text: one per system, the total, then each kept problem.
    public var lines: [String] {
        var lines: [String] = []
        func line(_ name: String, _ counts: Counts) -> String {
            "\(name): \(counts.sessions) sessions, \(counts.events) events: \(counts.identical) identical, "
                + "\(counts.migrated) migrated, \(counts.diverged) diverged, \(counts.failed) failed"
        }
        for name in systems.keys.sorted() { lines.append(line(name, systems[name]!)) }
        lines.append(line("total", total) + " (of \(sessionsInJournal) in the journal)")
        for verdict in problems {
            switch verdict.outcome {
            case .diverged:
                let divergence = verdict.divergence!
                var text = "diverged \(verdict.system) \(verdict.session): first at revision \(divergence.revision)"
                if let at = divergence.comparedAt, let patch = divergence.patch {
                    text +=
                        "; at kept revision \(at) journaled → replayed: "
                        + String(decoding: patch.json.serialized(), as: UTF8.self)
                }
                lines.append(text)
            default:
                lines.append("failed \(verdict.system) \(verdict.session): \(verdict.failure ?? "")")
            }
        }
        return lines
    }
}
