import FeedbackService
import Foundation
import Logging
import SessionInspection
import SessionJournal
import SessionJournalPostgres

/// `feedback-host verify [--data-dir DIR | --journal-url URL] [--sample N] [--max-divergent N]`: replays the journal's sessions through
/// this build's systems and says, per system, how many are identical, migrated, diverged or failed. Exits 0 when
/// at most `--max-divergent` sessions diverged or failed, 1 past it, 2 when the journal cannot be read or the
/// arguments are wrong. Progress goes to standard error, the report to standard output.
enum VerifyCommand {
    static let usage = """
        usage: feedback-host verify [--data-dir DIR | --journal-url URL] [--sample N] [--max-divergent N] [--show N]
          --data-dir DIR       the journal's directory (default: FEEDBACKHOST_DATA_DIR, else ./data);
                               no server may hold it
          --journal-url URL    a PostgreSQL journal instead (postgres://USER@HOST:PORT/DB; default:
                               FEEDBACKHOST_JOURNAL_URL); read while the replicas run, nothing is taken over
          --journal-password-file FILE
                               its password (default: FEEDBACKHOST_JOURNAL_PASSWORD_FILE, else PGPASSWORD)
          --sample N           replay about N sessions (every k-th in id order) instead of all
          --max-divergent N    diverged or failed sessions tolerated before the exit status is 1 (default 0)
          --show N             diverged or failed sessions described, at most (default 20)

        """

    static func run(arguments: [String], environment: [String: String], systems: [HostedSystem]) -> Int32 {
        var directory = environment["FEEDBACKHOST_DATA_DIR"] ?? ServiceApplication.defaultDataDirectory
        var url = environment["FEEDBACKHOST_JOURNAL_URL"].flatMap { $0.isEmpty ? nil : $0 }
        var passwordFile = environment["FEEDBACKHOST_JOURNAL_PASSWORD_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        var sample: Int?
        var maxDivergent = 0
        var show = 20
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            if flag == "--help" || flag == "-h" {
                FileHandle.standardOutput.write(Data(usage.utf8))
                return 0
            }
            guard let value = rest.popFirst() else { return refuse("\(flag) needs a value") }
            switch flag {
            case "--data-dir":
                directory = value
                url = nil
            case "--journal-url": url = value
            case "--journal-password-file": passwordFile = value
            case "--sample", "--max-divergent", "--show":
                guard let number = Int(value), number >= 0 else { return refuse("\(flag) takes a whole number ≥ 0") }
                if flag == "--sample" {
                    sample = number
                } else if flag == "--show" {
                    show = number
                } else {
                    maxDivergent = number
                }
            default: return refuse("unknown option \(flag)")
            }
        }
        var logger = Logger(label: "feedback-host.verify")
        logger.logLevel = .warning
        let journal: any SessionJournaling
        do {
            if let url {
                journal = try openPostgres(url: url, passwordFile: passwordFile, logger: logger)
            } else {
                // Opening would make an empty journal where there is none: a mistyped directory would then verify
                // nothing.
                let file = directory + "/" + JournalConfiguration().fileName
                guard FileManager.default.fileExists(atPath: file) else {
                    FileHandle.standardError.write(Data("feedback-host verify: there is no journal at \(file)\n".utf8))
                    return 2
                }
                // No background compaction: the history being verified stays as it is.
                journal = try Journal.open(
                    directory: directory,
                    configuration: JournalConfiguration(compactionIntervalMilliseconds: 0),
                    logger: logger
                )
            }
        } catch {
            FileHandle.standardError.write(Data("feedback-host verify: cannot open the journal: \(error)\n".utf8))
            return 2
        }
        defer { journal.close() }
        let started = ContinuousClock.now
        var lastProgress = started
        let report: VerificationReport
        do {
            report = try JournalVerifier(systems: systems).verify(journal, sample: sample, keep: show) { report in
                let now = ContinuousClock.now
                guard now - lastProgress >= .seconds(2) else { return }
                lastProgress = now
                let done = report.total.sessions
                let rate = Int(Double(done) / (Double((now - started).components.seconds) + 1e-9))
                let line =
                    "verify: \(done) sessions replayed of \(report.sessionsInJournal) (\(rate)/s), "
                    + "\(report.divergent) divergent\n"
                FileHandle.standardError.write(Data(line.utf8))
            }
        } catch {
            FileHandle.standardError.write(Data("feedback-host verify: cannot read the journal: \(error)\n".utf8))
            return 2
        }
        let elapsed = ContinuousClock.now - started
        var text = report.lines.joined(separator: "\n") + "\n"
        text += "verified in \(elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow)))\n"
        FileHandle.standardOutput.write(Data(text.utf8))
        if report.divergent > maxDivergent {
            let line =
                "feedback-host verify: \(report.divergent) sessions diverged or failed, more than --max-divergent "
                + "\(maxDivergent)\n"
            FileHandle.standardError.write(Data(line.utf8))
            return 1
        }
        return 0
    }

    /// The PostgreSQL journal at `url`, with the password in `passwordFile` when one is named; a URL the server
    /// would refuse (one that holds a password) is refused here too.
    private static func openPostgres(
        url: String,
        passwordFile: String?,
        logger: Logger
    ) throws(JournalError) -> PostgresJournal {
        // The server's own check of journal.url: a postgres:// URL without a password in it.
        if let problem = Setting.service.first(where: { $0.key == "journal.url" })?.problem(with: url) {
            throw JournalError(.configuration, problem)
        }
        // The kept history is read as it is; nothing is written but the lease of this reader.
        return try PostgresJournal.open(
            url: url,
            password: try ServiceApplication.journalPassword(file: passwordFile ?? ""),
            logger: logger
        )
    }

    private static func refuse(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("feedback-host verify: \(message)\n\(usage)".utf8))
        return 2
    }
}
