import Dispatch
import FeedbackService
import Foundation
import Logging
import Synchronization
import Systems

// feedback-host: reads its configuration, serves the built-in systems, stops gracefully on SIGTERM or SIGINT.

let reader = ServiceApplication.defaultReader(
    arguments: CommandLine.arguments,
    environment: ProcessInfo.processInfo.environment
)
let logLevel = Logger.Level(rawValue: reader.string(forKey: "log.level", default: "info")) ?? .info
let jsonLogs = reader.string(forKey: "log.format", default: "text") == "json"
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
        systems: [
            HostedSystem(CounterSystem()),
            HostedSystem(CatchSystem()),
            HostedSystem(TrafficLightSystem()),
        ],
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
// The first line on standard output, written unbuffered so that a parent process can read the port at once.
FileHandle.standardOutput.write(
    Data("listening on http://\(reader.string(forKey: "host", default: "127.0.0.1")):\(port)\n".utf8)
)

/// Runs the graceful shutdown on SIGTERM or SIGINT. Not main-actor code: the handlers run on their own queue.
nonisolated func handleTerminationSignals(
    _ application: ServiceApplication,
    logger: Logger
) -> [any DispatchSourceSignal] {
    let queue = DispatchQueue(label: "feedback-host.signals")
    let started = Atomic<Bool>(false)
    return [SIGTERM, SIGINT].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
        source.setEventHandler {
            // A second signal while draining changes nothing: the first shutdown runs to its deadline.
            guard !started.exchange(true, ordering: .relaxed) else { return }
            logger.info("shutting down", metadata: ["signal": "\(number)"])
            Task {
                await application.shutdown(deadline: .seconds(10))
                exit(0)
            }
        }
        source.resume()
        return source
    }
}

let signalSources = handleTerminationSignals(application, logger: logger)
dispatchMain()
