import ConformanceChecks
import FeedbackJSON
import FeedbackLoop
import FeedbackTesting
import Foundation
import Logging
import SessionJournal
import Synchronization
import SystemKit
import Systems
import Testing
import Upstream

@testable import FeedbackService

/// Sessions exported as fixtures (`SessionExport`, what `GET /v1/sessions/{id}/export` sends) replay through
/// `FeedbackTesting` to the very states the journal holds: 1,000 random sessions of the built-in systems, with their
/// timers under a `TestClock` and paging through an upstream that answers pages, 503s with `Retry-After`, 500s and
/// timeouts.
@Suite(.timeLimit(.minutes(5)))
struct FixtureExportTests {
    /// An upstream whose every answer is drawn from a seed: a page (sometimes with a next page), a 503 with
    /// `Retry-After`, a 500, or a timeout. It answers without suspending, so the paging feedback's events come in
    /// the step that asked for the page.
    final class ScriptedUpstream: UpstreamFetching, Sendable {
        private let random: Mutex<SplitMix>
        init(seed: UInt64) { random = Mutex(SplitMix(seed)) }

        func fetch(_ request: UpstreamRequest) async throws -> UpstreamResponse {
            let draw = random.withLock { $0.next() }
            let head = { (status: Int, headers: UpstreamHeaders) in
                UpstreamHead(status: status, headers: headers, url: request.url)
            }
            switch draw % 8 {
            case 0: throw UpstreamError(.timedOut, "scripted timeout of \(request.url)")
            case 1: return UpstreamResponse(head: head(503, ["Retry-After": "1"]), body: [])
            case 2: return UpstreamResponse(head: head(500, [:]), body: Array("oops".utf8))
            default:
                let items = (0..<Int(draw % 4)).map { #"{"name":"item \#($0)"}"# }.joined(separator: ",")
                let next = draw % 3 == 0 ? #""http://upstream.test/search?cursor=\#(draw % 97)""# : "null"
                let body = #"{"items":[\#(items)],"total_count":\#(draw % 50),"next":\#(next)}"#
                return UpstreamResponse(
                    head: head(200, ["Content-Type": "application/json"]),
                    body: Array(body.utf8)
                )
            }
        }
    }

    private static let systems: [String: HostedSystem] = [
        "counter": HostedSystem(CounterSystem()),
        "catch": HostedSystem(CatchSystem()),
        "traffic-light": HostedSystem(TrafficLightSystem()),
        "paging": HostedSystem(
            PagingSystem(configuration: PagingConfiguration(upstream: "http://upstream.test/search", maxAttempts: 2))
        ),
    ]

    /// A client event of `system`, drawn from `draw`.
    private static func clientEvent(_ system: String, _ draw: UInt64) -> JSONValue {
        let type: String
        var members: [String: JSONValue] = [:]
        switch system {
        case "counter":
            type = ["increment", "decrement", "add"][Int(draw % 3)]
            if type == "add" { members["amount"] = .int(Int64(draw % 200) - 100) }
        case "catch": type = "throwToMachine"
        case "traffic-light": type = draw % 4 == 0 ? "stop" : "start"
        default:
            type = ["search", "search", "loadNextPage", "retry", "clear"][Int(draw % 5)]
            if type == "search" { members["query"] = .string("q\(draw % 10)") }
        }
        members["type"] = .string(type)
        return .object(members)
    }

    @Test func fixturesOfAThousandRandomSessionsReplayToTheJournaledStates() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let journal = try JournaledSessions.open(directory.path, history: 1000)
        defer { journal.close() }
        let persistence = SessionPersistence(journal: journal, snapshotInterval: 7, logger: JournaledSessions.quiet)
        var random = SplitMix(1000)
        let names = ["counter", "catch", "traffic-light", "paging"]
        for number in 0..<1000 {
            let name = names[Int(random.next() % 4)]
            let clock = TestClock()
            let environment = SystemEnvironment(
                clock: clock,
                wallClock: .following(clock, from: WallTime(millisecondsSince1970: 1_767_225_600_000)),
                upstream: ScriptedUpstream(seed: random.next()),
                logger: JournaledSessions.quiet
            )
            let session = try Self.systems[name]!.startSession(
                id: SessionID(JournaledSessions.id(number))!,
                epoch: 1,
                state: nil,
                inboxCapacity: 1000,
                environment: SessionEnvironment(system: environment),
                persistence: persistence
            )
            for _ in 0..<(1 + random.next() % 6) {
                // A refused event (a retry with nothing failed, say) is the system's answer, not the test's concern.
                _ = try? await session.post([Self.clientEvent(name, random.next())])
                // Time passes: timers and backoffs come due; their effects run on the cooperative pool.
                clock.advance(by: .milliseconds(Int64(random.next() % 20_000)))
                for _ in 0..<20 { await Task.yield() }
            }
            session.passivate()
        }
        try await journal.append([])

        var replayed = 0
        var events = 0
        var effectTypes: Set<String> = []
        var mismatches: [String] = []
        var corpus: [String: (states: [JSONValue], events: [JSONValue])] = [:]
        var histories: [SessionHistory] = []
        try journal.readHistories(batchSize: 100) { histories += $0 }
        #expect(histories.count == 1000)
        for history in histories {
            let exported = try SessionExport.fixture(history, schemaVersion: 1)
            // Through its JSON text, as a test would read a downloaded fixture.
            let fixture = try SessionFixture(json: try JSONValue(parsing: exported.json.serialized()))
            #expect(fixture == exported)
            #expect(fixture.base.revision == 0)
            for event in fixture.events where event.origin == "effect" {
                effectTypes.insert(event.event.eventType ?? "")
            }
            corpus[fixture.system, default: ([], [])].events += fixture.events.map(\.event)
            corpus[fixture.system, default: ([], [])].states += try Self.everyState(of: fixture)
            do throws(FixtureMismatch) {
                let checked: Int
                switch fixture.system {
                case "counter":
                    checked = try await FixtureReplay.replay(fixture, through: CounterSystem()).checkedChecksums
                case "catch": checked = try await FixtureReplay.replay(fixture, through: CatchSystem()).checkedChecksums
                case "traffic-light":
                    checked = try await FixtureReplay.replay(fixture, through: TrafficLightSystem()).checkedChecksums
                default:
                    checked = try await FixtureReplay.replay(fixture, through: PagingSystem()).checkedChecksums
                }
                #expect(checked == fixture.events.count)
                replayed += 1
                events += fixture.events.count
            } catch {
                mismatches.append("\(fixture.session) \(fixture.system): \(error)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3))")
        #expect(replayed == 1000)
        #expect(events > 3000)
        // The effects' results are in the fixtures: timers scheduled, pages loaded, retried and failed.
        #expect(effectTypes.isSuperset(of: ["schedule", "pageLoaded", "retrying", "pageFailed"]), "\(effectTypes)")

        // Every state these sessions reached and every event they journaled fits the schemas the system publishes,
        // as a validator that is not ours (Python's jsonschema) reads them.
        var groups: [JSONSchemaValidator.Group] = []
        for (name, found) in corpus.sorted(by: { $0.key < $1.key }) {
            let entry = Self.systems[name]!.description
            guard case .object(let members) = entry, let stateSchema = members["stateSchema"],
                case .object(let byType)? = members["eventSchemas"]
            else {
                Issue.record("\(name) publishes no schemas")
                continue
            }
            groups.append(.init(label: "\(name) states", schema: stateSchema, instances: found.states))
            for (type, schema) in byType {
                let instances = found.events.filter { $0.eventType == type }
                groups.append(.init(label: "\(name) \(type)", schema: schema, instances: instances))
            }
        }
        let (checked, failures) = try JSONSchemaValidator.validate(groups)
        #expect(failures.isEmpty, "\(failures)")
        #expect(checked > 6000)
    }

    /// Every state of `fixture`'s session, from its base through each event, as the journal encodes states.
    private static func everyState(of fixture: SessionFixture) throws -> [JSONValue] {
        switch fixture.system {
        case "counter": try everyState(of: fixture, through: CounterSystem.self)
        case "catch": try everyState(of: fixture, through: CatchSystem.self)
        case "traffic-light": try everyState(of: fixture, through: TrafficLightSystem.self)
        default: try everyState(of: fixture, through: PagingSystem.self)
        }
    }

    private static func everyState<System: FeedbackSystem>(
        of fixture: SessionFixture,
        through system: System.Type
    ) throws -> [JSONValue] {
        var state = try fixture.base.state.decode(System.State.self)
        var states = [try JSONValue(parsing: System.encodeState(state))]
        for event in fixture.events {
            System.reduce(&state, try event.event.decode(System.Event.self))
            states.append(try JSONValue(parsing: System.encodeState(state)))
        }
        return states
    }

    @Test func aFixtureWhoseStateWasChangedFailsAtThatRevision() async throws {
        var fixture = SessionFixture(
            session: JournaledSessions.id(1),
            system: "counter",
            schemaVersion: 1,
            base: .init(revision: 0, schemaVersion: 1, state: .object(["count": .int(0)])),
            events: [1, 2, 3].map { revision in
                .init(
                    revision: UInt64(revision),
                    origin: "client",
                    time: 1000 * Int64(revision),
                    schemaVersion: 1,
                    event: .object(["type": .string("increment")]),
                    stateChecksum: StateChecksum.of(#"{"count":\#(revision)}"#.utf8)
                )
            },
            checkpoints: [.init(revision: 3, schemaVersion: 1, state: .object(["count": .int(3)]))]
        )
        let outcome = try await FixtureReplay.replay(fixture, through: CounterSystem())
        #expect(outcome.checkedChecksums == 3)
        #expect(outcome.checkedCheckpoints == 1)
        #expect(outcome.finalState.count == 3)
        fixture.events[1].stateChecksum = StateChecksum.of(#"{"count":7}"#.utf8)
        do {
            _ = try await FixtureReplay.replay(fixture, through: CounterSystem())
            Issue.record("a changed checksum passed")
        } catch {
            #expect(error.revision == 2)
        }
    }
}
