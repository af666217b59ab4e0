import ConformanceChecks
import CurlClient
import FeedbackJSON
import FeedbackLoop
import FeedbackService
import Foundation
import Logging
import SystemKit
import Systems
import Testing
import Upstream

/// The guide's example system: its timer in virtual time, and served by the real server next to the built-ins.
@Suite(.timeLimit(.minutes(1)), .statesFitTheirSchemas)
struct ReminderSystemTests {
    @Test func aReminderFiresAfterItsDelay() async throws {
        let clock = TestClock()
        let loop = ReminderSystem().makeLoop(from: ReminderSystem().initialState, environment: environment(clock))
        defer { loop.stop() }
        loop.send(.remind(text: "tea", seconds: 3))
        #expect(loop.state.pending?.due == testOrigin + .seconds(3))
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(2))
        #expect(loop.state.fired.isEmpty)
        clock.advance(by: .seconds(1))
        var fired: [String]?
        for await state in loop.states where state.pending == nil {
            fired = state.fired
            break
        }
        #expect(fired == ["tea"])
    }

    /// A restart (a new loop from the journaled state, an hour later by the wall clock less a second) keeps the
    /// reminder's deadline: it fires a second later, not another hour later.
    @Test func aRestoredReminderFiresAtItsDeadline() async throws {
        let clock = TestClock()
        let journaled = ReminderSystem.State(
            pending: .init(text: "call", seconds: 3600, due: testOrigin + .seconds(3600))
        )
        let loop = ReminderSystem().makeLoop(
            from: journaled,
            revision: 2,
            environment: environment(clock, origin: testOrigin + .seconds(3599))
        )
        defer { loop.stop() }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(999))
        #expect(loop.state.fired.isEmpty)
        clock.advance(by: .milliseconds(1))
        let state = await firstState(of: loop) { $0.pending == nil }
        #expect(state?.fired == ["call"])
    }

    @Test func registeringTheSystemServesIt() async throws {
        let reader = ServiceApplication.defaultReader(
            arguments: ["my-host", "--host", "127.0.0.1", "--port", "0", "--data-dir", "none"],
            environment: [:]
        )
        let application = try ServiceApplication.build(
            reader: reader,
            systems: [HostedSystem(ReminderSystem()), HostedSystem(CounterSystem())],
            logger: Logger(label: "my-host")
        )
        let port = try application.start()
        let client = CheckedFetcher()
        let base = "http://127.0.0.1:\(port)"
        let json: UpstreamHeaders = ["Content-Type": "application/json"]
        do {
            let systems = try await client.fetch(UpstreamRequest(url: "\(base)/v1/systems"))
            #expect(String(decoding: systems.body, as: UTF8.self).contains(#""name":"reminder""#))
            let created = try await client.fetch(
                UpstreamRequest(
                    method: "POST",
                    url: "\(base)/v1/sessions",
                    headers: json,
                    body: Array(#"{"system":"reminder"}"#.utf8)
                )
            )
            #expect(created.status == 201)
            let body = try JSONValue(parsing: created.body)
            let id = try #require(body.objectMember("id"))
            let posted = try await client.fetch(
                UpstreamRequest(
                    method: "POST",
                    url: "\(base)/v1/sessions/\(id)/events",
                    headers: json,
                    body: Array(#"{"type":"remind","text":"tea","seconds":60}"#.utf8)
                )
            )
            #expect(posted.status == 200)
            #expect(String(decoding: posted.body, as: UTF8.self).contains(#""seconds":60,"text":"tea"}"#))
            let internalEvent = try await client.fetch(
                UpstreamRequest(
                    method: "POST",
                    url: "\(base)/v1/sessions/\(id)/events",
                    headers: json,
                    body: Array(#"{"type":"fire"}"#.utf8)
                )
            )
            #expect(internalEvent.status == 422)
        } catch {
            Issue.record(error)
        }
        await client.shutdown()
        await application.shutdown(deadline: .seconds(2))
    }
}

extension JSONValue {
    fileprivate func objectMember(_ name: String) -> String? {
        guard case .object(let members) = self, case .string(let value)? = members[name] else { return nil }
        return value
    }
}
