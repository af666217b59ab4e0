import FeedbackService
import Foundation
import Logging
import Poll
import ServiceLifecycle
import Systems

// The whole main.swift of a host of one's own: the poll beside the built-in counter.
let logger = Logger(label: "poll-host")
let application = try ServiceApplication.build(  // opens the journal in --data-dir (default ./data)
    reader: ServiceApplication.defaultReader(
        arguments: CommandLine.arguments,
        environment: ProcessInfo.processInfo.environment
    ),
    systems: [HostedSystem(PollSystem()), HostedSystem(CounterSystem())],
    logger: logger
)
print("listening on port \(try application.start())")
try await ServiceGroup(
    configuration: .init(services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
).run()
