import FeedbackService
import Foundation
import Logging
import ServiceLifecycle
import Systems
import UnixSignals

// feedback-host: reads its configuration, serves the built-in systems, stops gracefully on SIGTERM or SIGINT.

// With TZ unset, glibc's localtime() (swift-log's text lines) stats /etc/localtime at every call: one system call per
// log line. Named, the zone file is read once. Set before any other thread exists (setenv is not thread-safe);
// a TZ given by the environment is kept.
setenv("TZ", ":/etc/localtime", 0)

// `feedback-host verify ...`: replay the journal through this build, report, exit.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "verify" {
    exit(
        VerifyCommand.run(
            arguments: Array(CommandLine.arguments.dropFirst(2)),
            environment: ProcessInfo.processInfo.environment,
            systems: builtInSystems(
                ServiceApplication.defaultReader(
                    arguments: ["feedback-host"],
                    environment: ProcessInfo.processInfo.environment
                )
            )
        )
    )
}

// Mistakes stop the start: an unknown flag or variable, an ill-typed or out-of-range value.
do {
    switch try ConfigurationCheck.check(
        arguments: CommandLine.arguments,
        environment: ProcessInfo.processInfo.environment,
        settings: Setting.all
    ) {
    case .help:
        FileHandle.standardOutput.write(Data(ConfigurationCheck.help(for: Setting.all).utf8))
        FileHandle.standardOutput.write(
            Data("\nfeedback-host verify --help: replay the journal through this build (docs/SYSTEMS.md)\n".utf8)
        )
        exit(0)
    case .version:
        FileHandle.standardOutput.write(Data("feedback-host \(ServiceApplication.version)\n".utf8))
        exit(0)
    case .run:
        break
    }
} catch {
    FileHandle.standardError.write(
        Data("feedback-host: cannot start:\n\(error.problems.map { "  " + $0 }.joined(separator: "\n"))\n".utf8)
    )
    exit(2)
}
let reader = ServiceApplication.defaultReader(
    arguments: CommandLine.arguments,
    environment: ProcessInfo.processInfo.environment
)
// Tokens required (`--auth jwt`, or `auto` on an address other machines reach) need keys that load: else stop here.
let authProblems = ServiceApplication.authStartProblems(reader)
if !authProblems.isEmpty {
    FileHandle.standardError.write(
        Data("feedback-host: cannot start:\n\(authProblems.map { "  " + $0 }.joined(separator: "\n"))\n".utf8)
    )
    exit(2)
}
let logLevel = Logger.Level(rawValue: reader.string(.logLevel)) ?? .info
let jsonLogs = reader.string(.logFormat) == "json"
LoggingSystem.bootstrap { label in
    if jsonLogs { return JSONLogHandler(label: label, logLevel: logLevel) }
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = logLevel
    return handler
}
let logger = Logger(label: "feedback-host")
let application: ServiceApplication
do {
    application = try ServiceApplication.build(
        reader: reader,
        systems: builtInSystems(reader),
        logger: logger
    )
} catch {
    FileHandle.standardError.write(Data("feedback-host: cannot open the journal: \(error)\n".utf8))
    exit(1)
}

let port: Int
do {
    port = try application.start()
} catch {
    FileHandle.standardError.write(Data("feedback-host: cannot start: \(error)\n".utf8))
    exit(1)
}
/// Writes the first line on standard output, `listening on http://HOST:PORT`, unbuffered so that a parent process
/// can read the port at once, then waits for the shutdown. It runs inside the group, after the group trapped
/// SIGTERM and SIGINT: a parent that signals as soon as it read the line gets a graceful shutdown.
struct ListeningAnnouncement: Service {
    let line: String

    func run() async throws {
        FileHandle.standardOutput.write(Data(line.utf8))
        try? await gracefulShutdown()
    }
}

// swift-service-lifecycle runs the application until SIGTERM or SIGINT, then its graceful shutdown; a second
// signal changes nothing, the first shutdown runs to its deadline.
let group = ServiceGroup(
    configuration: ServiceGroupConfiguration(
        services: [
            ListeningAnnouncement(
                line: "listening on http://\(reader.string(.host)):\(port)\n"
            ),
            application,
        ],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger
    )
)
do {
    try await group.run()
} catch {
    logger.error("stopped with an error", metadata: ["error": "\(error)"])
    exit(1)
}
exit(0)
