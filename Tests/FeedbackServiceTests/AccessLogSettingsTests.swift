import FeedbackService
import HTTPServer
import Logging
import Systems
import Testing

/// The `log.access*` keys decide whether `ServiceApplication.build` gives the server an access log, and how it
/// writes.
@Suite(.timeLimit(.minutes(1))) struct AccessLogSettingsTests {
    static func accessLog(_ flags: [String], level: Logger.Level = .info) async throws -> AccessLog.Configuration? {
        let reader = ServiceApplication.defaultReader(
            arguments: ["feedback-host", "--host", "127.0.0.1", "--port", "0", "--data-dir", "none"] + flags,
            environment: [:]
        )
        var logger = Logger(label: "access-log-settings")
        logger.logLevel = level
        let application = try ServiceApplication.build(
            reader: reader,
            systems: [HostedSystem(CounterSystem())],
            logger: logger
        )
        let configuration = application.server.accessLog?.configuration
        await application.shutdown(deadline: .seconds(1))
        return configuration
    }

    @Test func isOnByDefaultAsTextLinesAtInfoBufferedForAQuarterSecond() async throws {
        let configuration = try #require(try await Self.accessLog([]))
        #expect(configuration.format == .text)
        #expect(configuration.level == "info")
        #expect(configuration.bufferBytes == 65536)
        #expect(configuration.flushInterval == .milliseconds(250))
    }

    @Test func writesJSONWhenTheLogFormatIsJSONUnlessToldOtherwise() async throws {
        #expect(try await Self.accessLog(["--log-format", "json"])?.format == .json)
        #expect(try await Self.accessLog(["--log-format", "json", "--log-access", "text"])?.format == .text)
    }

    @Test func takesItsFormatBufferAndFlushFromTheKeys() async throws {
        let configuration = try #require(
            try await Self.accessLog([
                "--log-access", "json", "--log-access-buffer-bytes", "0", "--log-access-flush-ms", "1000",
                "--log-access-level", "notice",
            ])
        )
        #expect(configuration.format == .json)
        #expect(configuration.level == "notice")
        #expect(configuration.bufferBytes == 0)
        #expect(configuration.flushInterval == .seconds(1))
    }

    @Test func isOffWhenAskedOrBelowTheLogLevel() async throws {
        #expect(try await Self.accessLog(["--log-access", "off"]) == nil)
        #expect(try await Self.accessLog([], level: .warning) == nil)
        #expect(try await Self.accessLog(["--log-access-level", "debug"]) == nil)
        #expect(try await Self.accessLog(["--log-access-level", "warning"], level: .warning) != nil)
    }
}
