import FeedbackService
import Foundation
import Testing

@testable import feedback_host

/// Every mistake in the command line or the environment stops the start with a line naming it; `--help` and
/// `--version` answer without starting.
struct ConfigurationCheckTests {
    private func problems(_ arguments: [String], environment: [String: String] = [:]) -> [String] {
        do {
            _ = try ConfigurationCheck.check(
                arguments: ["feedback-host"] + arguments,
                environment: environment,
                settings: Setting.all
            )
            return []
        } catch {
            return error.problems
        }
    }

    @Test func theShippedWaysOfStartingPass() throws {
        #expect(problems([]).isEmpty)
        #expect(problems(["--host", "0.0.0.0", "--port", "0", "--data-dir", "none", "--log-level", "warning"]).isEmpty)
        #expect(
            problems(["--port=8081", "--stream-gzip", "--fsync", "interval:10", "--cors-origins", "a", "b"]).isEmpty
        )
        #expect(problems(["--stream-gzip", "false", "--upstream", "https://example.org/search"]).isEmpty)
        let environment = [
            "FEEDBACKHOST_HOST": "0.0.0.0", "FEEDBACKHOST_PORT": "8080", "FEEDBACKHOST_LOG_FORMAT": "json",
            "FEEDBACKHOST_DATA_DIR": "/var/lib/feedbackhost", "FEEDBACKHOST_STREAM_GZIP": "yes", "PATH": "/bin",
        ]
        #expect(problems([], environment: environment).isEmpty)
    }

    @Test func everyDefaultIsAcceptedByItsOwnSetting() {
        for setting in Setting.all where !(setting.kind == .text && setting.defaultValue.isEmpty) {
            #expect(setting.problem(with: setting.defaultValue) == nil, "\(setting.key)")
        }
    }

    @Test func anUnknownOptionIsNamedWithTheOneMeant() {
        #expect(problems(["--data_dir", "/x"]) == ["unknown option --data_dir; did you mean --data-dir?"])
        #expect(
            problems(["--sessions-max-activ", "3"])
                == ["unknown option --sessions-max-activ; did you mean --sessions-max-active?"]
        )
        #expect(
            problems(["--max-sessions", "3"]) == ["unknown option --max-sessions; it was renamed --sessions-max-active"]
        )
        #expect(problems(["--frobnicate"]) == ["unknown option --frobnicate; see --help for the options"])
    }

    @Test func illTypedAndOutOfRangeValuesSayWhatIsAccepted() {
        #expect(
            problems(["--sessions-max-active", "abc"]) == [
                #"--sessions-max-active "abc" is not a whole number from 1 to 100000000"#
            ]
        )
        #expect(
            problems(["--max-event-body-bytes", "-5"])
                == [#"--max-event-body-bytes "-5" is not a whole number from 1 to 67108864"#]
        )
        #expect(problems(["--port", "70000"]) == [#"--port "70000" is not a whole number from 0 to 65535"#])
        #expect(problems(["--log-level", "loud"]).first?.contains("one of trace, debug, info") == true)
        #expect(
            problems(["--fsync", "sometimes"]) == [#"--fsync "sometimes" is not per-commit or interval:MS with MS > 0"#]
        )
        #expect(
            problems(["--session-retention", "5x"])
                == [#"--session-retention "5x" is not forever or a whole number of d, h, m or s"#]
        )
        #expect(problems(["--session-retention", "30d"]).isEmpty)
        #expect(problems(["--stream-gzip", "maybe"]) == [#"--stream-gzip "maybe" is not true or false"#])
        // The journal's password never goes on the command line.
        #expect(
            problems(["--journal-url", "postgres://app:secret@db:5432/feedback"]).first?.contains(
                "is not a URL without a password"
            ) == true
        )
        #expect(problems(["--journal-url", "mysql://db/x"]).first?.contains("postgres://USER@HOST:PORT/DB") == true)
        #expect(problems(["--journal-url", "postgres://app@db:5432/feedback"]).isEmpty)
        #expect(problems(["--port"]) == ["--port needs a value: a whole number from 0 to 65535"])
        #expect(problems(["--port", "1", "2"]) == ["--port takes one value, not 2: 1 2"])
    }

    @Test func strayArgumentsAndEveryProblemAreReportedTogether() {
        let found = problems(["serve", "--port", "x"], environment: ["FEEDBACKHOST_SESSIONS_MAX_ACTIV": "1"])
        #expect(found.count == 3)
        #expect(found[0].hasPrefix(#"unexpected argument "serve""#))
        #expect(
            found[2]
                == "unknown environment variable FEEDBACKHOST_SESSIONS_MAX_ACTIV; did you mean FEEDBACKHOST_SESSIONS_MAX_ACTIVE?"
        )
    }

    @Test func theEnvironmentIsCheckedWithItsOwnSpellings() {
        #expect(
            problems([], environment: ["FEEDBACKHOST_PORT": "eighty"]) == [
                #"FEEDBACKHOST_PORT "eighty" is not a whole number from 0 to 65535"#
            ]
        )
        #expect(problems([], environment: ["FEEDBACKHOST_STREAM_GZIP": "1"]).isEmpty)
        #expect(problems([], environment: ["OTHER_PORT": "eighty"]).isEmpty)
    }

    @Test func helpAndVersionAnswerWithoutStarting() throws {
        let help = try ConfigurationCheck.check(
            arguments: ["fh", "--port", "x", "--help"],
            environment: [:],
            settings: Setting.all
        )
        #expect(help == .help)
        #expect(
            try ConfigurationCheck.check(arguments: ["fh", "--version"], environment: [:], settings: Setting.all)
                == .version
        )
        let text = ConfigurationCheck.help(for: Setting.all)
        for setting in Setting.all { #expect(text.contains(setting.flag + " (")) }
        #expect(text.contains("--sessions-max-active (a whole number from 1 to 100000000; default 100000)"))
    }
}

/// The binary itself: a mistake exits 2 with the message on standard error before anything listens; `--help` and
/// `--version` print and exit 0.
@Suite(.timeLimit(.minutes(1)))
struct ExecutableRefusesMistakesTests {
    static var binary: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/feedback-host")
    }

    private func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FEEDBACKHOST_") }
        environment["FEEDBACKHOST_DATA_DIR"] = "none"
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outText = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, outText, errText)
    }

    @Test func everyMistypedFlagStopsTheStart() throws {
        for (arguments, message) in [
            (["--data_dir", "/x"], "unknown option --data_dir; did you mean --data-dir?"),
            (["--sessions-max-active", "abc"], #"--sessions-max-active "abc" is not a whole number"#),
            (["--max-event-body-bytes", "-5"], #"--max-event-body-bytes "-5" is not a whole number"#),
            (["--port", "0", "oops"], "--port takes one value, not 2"),
            (["--journal-url", "postgres://app:secret@db/x"], "is not a URL without a password"),
        ] {
            let result = try run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.err.contains(message), "\(result.err)")
            #expect(!result.out.contains("listening"))
        }
    }

    @Test func helpAndVersionPrintAndExit() throws {
        let help = try run(["--help"])
        #expect(help.status == 0)
        #expect(help.out.contains("--data-dir (text; default data)"))
        #expect(!help.out.contains("listening"))
        let version = try run(["--version"])
        #expect(version.status == 0)
        #expect(version.out == "feedback-host \(ServiceApplication.version)\n")
    }
}
