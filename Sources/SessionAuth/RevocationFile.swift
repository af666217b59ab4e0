import FeedbackJSON
package import Logging
package import SessionJournal
import SessionRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `token-revocations.json`: where a server before the journal kept the token generations (issue 21), one file per
/// data directory, an object of session id to generation. A replica that took a session over never saw another's file,
/// so a revoked token worked again after a move; the journal now keeps each session's generation with the session.
///
/// At start, with a journal, the file is adopted once: every generation is raised into the journal
/// (`SessionJournaling.adoptTokenGenerations`, never lowered, so a second adoption changes nothing), then the file is
/// renamed `token-revocations.json.adopted` and nothing writes it again. A file that cannot be read stops the start: its
/// revocations would otherwise be lost without a word.
///
/// Concurrency: runs once, on the thread that builds the application, before any session is in memory.
package enum RevocationFile {
    static let name = "token-revocations.json"

    /// Adopts the file in `directory` into `journal`, when there is one.
    package static func adopt(
        in directory: String,
        into journal: any SessionJournaling,
        logger: Logger
    ) throws(JournalError) {
        let path = directory + "/" + name
        guard FileManager.default.fileExists(atPath: path) else { return }
        let generations = try read(path)
        let raised = try journal.adoptTokenGenerations(generations)
        let adopted = path + ".adopted"
        try? FileManager.default.removeItem(atPath: adopted)
        do {
            try FileManager.default.moveItem(atPath: path, toPath: adopted)
        } catch {
            logger.warning(
                Logger.Message(
                    stringLiteral: "token revocations adopted into the journal, but their file could not be renamed: "
                        + "it is adopted again (changing nothing) at the next start"
                ),
                metadata: ["file": "\(path)", "error": "\(error)"]
            )
        }
        logger.info(
            "token revocations of an earlier version adopted into the journal",
            metadata: ["file": "\(adopted)", "sessions": "\(generations.count)", "raised": "\(raised.count)"]
        )
    }

    /// The generations the file at `path` holds, by session id.
    static func read(_ path: String) throws(JournalError) -> [String: UInt64] {
        guard let data = FileManager.default.contents(atPath: path),
            case .object(let members)? = try? JSONValue(parsing: Array(data))
        else {
            throw JournalError(
                .configuration,
                "\(path) (token revocations of an earlier version) is not a JSON object of session ids to generations; "
                    + "restore it from a backup, or remove it to forget those revocations"
            )
        }
        var generations: [String: UInt64] = [:]
        for (key, value) in members {
            if SessionID(key) != nil, case .int(let generation) = value, generation > 0 {
                generations[key] = UInt64(generation)
            }
        }
        return generations
    }
}
