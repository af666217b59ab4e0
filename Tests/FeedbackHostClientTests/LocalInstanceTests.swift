import FeedbackHostTesting
import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(2)))
struct LocalInstanceTests {
    private func json(_ data: Data) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    @Test func startsOnAFreePortWithTheManualClockAndStopsByItsProcessID() async throws {
        let instance = try await LocalInstance.start()
        let pid = try #require(instance.processIdentifier)
        #expect(instance.url.absoluteString.hasPrefix("http://127.0.0.1:"))
        #expect(instance.port > 0)
        let clock = try json(try await instance.checkedRequest("GET", "/v1/clock"))
        #expect(clock["mode"] as? String == "manual")
        #expect(instance.log.contains("clock manual"))
        instance.stop()
        #expect(instance.processIdentifier == nil)
        #expect(kill(pid, 0) != 0)
        #expect(!FileManager.default.fileExists(atPath: instance.directory.path))
        instance.stop()
    }

    @Test func advanceAnswersOnceTheTimersDueFired() async throws {
        try await withLocalInstance { instance in
            let game =
                try json(
                    try await instance.checkedRequest("POST", "/v1/sessions", body: Data(#"{"system":"catch"}"#.utf8))
                )["id"] as! String
            try await instance.checkedRequest(
                "POST",
                "/v1/sessions/\(game)/events",
                body: Data(#"{"type":"throwToMachine"}"#.utf8)
            )
            try await instance.advance(by: .milliseconds(999))
            let before = try json(try await instance.checkedRequest("GET", "/v1/sessions/\(game)"))
            #expect((before["state"] as? [String: Any])?["holder"] as? String == "machine")
            let advance = try await instance.advance(by: .seconds(1))
            #expect(advance.timersFired == 1)
            #expect(advance.now - advance.from == 1000)
            let after = try json(try await instance.checkedRequest("GET", "/v1/sessions/\(game)"))
            #expect((after["state"] as? [String: Any])?["holder"] as? String == "human")
        }
    }

    @Test func restartKeepsThePortAndTheSessions() async throws {
        try await withLocalInstance { instance in
            let counter =
                try json(
                    try await instance.checkedRequest("POST", "/v1/sessions", body: Data(#"{"system":"counter"}"#.utf8))
                )["id"] as! String
            try await instance.checkedRequest(
                "POST",
                "/v1/sessions/\(counter)/events",
                body: Data(#"{"type":"increment"}"#.utf8)
            )
            let before = instance.processIdentifier
            try await instance.restart()
            #expect(instance.processIdentifier != before)
            let session = try json(try await instance.checkedRequest("GET", "/v1/sessions/\(counter)"))
            #expect(session["rev"] as? Int == 1)
        }
    }

    @Test func aFailedStartSaysWhyWithTheLog() async throws {
        let error = await #expect(throws: LocalInstanceError.self) {
            _ = try await LocalInstance.start(arguments: ["--no-such-flag"])
        }
        #expect(error?.code == .startFailed)
        #expect(error?.message.contains("no-such-flag") == true)
        // Its private directory is gone with it.
        let left = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)
            .filter { $0.hasPrefix("feedbackhost-instance-") }
        #expect(left.allSatisfy { !(error?.message.contains($0) ?? false) })
    }

    @Test func aFlagGivenReplacesTheInstancesOwn() async throws {
        try await withLocalInstance(arguments: ["--clock", "skip"]) { instance in
            let clock = try json(try await instance.checkedRequest("GET", "/v1/clock"))
            #expect(clock["mode"] as? String == "skip")
        }
    }

    @Test func theInstancesOwnVariablesDoNotReachTheServer() async throws {
        setenv("FEEDBACKHOST_KEEP_INSTANCE", "1", 1)
        defer { unsetenv("FEEDBACKHOST_KEEP_INSTANCE") }
        let instance = try await LocalInstance.start()
        instance.stop()
        try? FileManager.default.removeItem(at: instance.directory)
    }
}
