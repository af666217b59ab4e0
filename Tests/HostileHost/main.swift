import FeedbackService
import Foundation
import Logging
import ServiceLifecycle
import Systems
import UnixSignals

// A host of one's own as docs/SYSTEMS.md shows it, serving the counter beside four systems with bugs (issue 31):
// Tests/Containment drives it to check that each harms only its own sessions.

setenv("TZ", ":/etc/localtime", 0)
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .warning
    return handler
}
let logger = Logger(label: "hostile-host")
let application = try ServiceApplication.build(
    reader: ServiceApplication.defaultReader(
        arguments: CommandLine.arguments,
        environment: ProcessInfo.processInfo.environment
    ),
    systems: [
        HostedSystem(CounterSystem()), HostedSystem(RunawaySystem()), HostedSystem(SleepySystem()),
        HostedSystem(StormSystem()), HostedSystem(TrapSystem()),
    ],
    logger: logger
)
let port = try application.start()
// Unbuffered: the test reads this line from a pipe.
FileHandle.standardOutput.write(Data("listening on http://127.0.0.1:\(port)\n".utf8))
try await ServiceGroup(
    configuration: .init(services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
).run()
