import ConformanceChecks
import FeedbackJSON
import Foundation
import SessionRuntime
import Systems
import Testing

@testable import FeedbackService

/// The JSON Schemas the macros derive, as `GET /v1/systems` and `GET /v1/systems/{name}` publish them, checked by
/// a validator that is not ours (Python's `jsonschema`), and the refusals that quote them in the client's words.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct SystemSchemaTests {
    static let builtIns: [HostedSystem] = [
        HostedSystem(CounterSystem()), HostedSystem(CatchSystem()), HostedSystem(TrafficLightSystem()),
        HostedSystem(PagingSystem()),
    ]

    static func member(_ value: JSONValue, _ name: String) -> JSONValue? {
        guard case .object(let members) = value else { return nil }
        return members[name]
    }

    @Test func everyExampleEventAndInitialStateFitsThePublishedSchemas() throws {
        var groups: [JSONSchemaValidator.Group] = []
        for system in Self.builtIns {
            let entry = system.description
            let stateSchema = try #require(
                Self.member(entry, "stateSchema"),
                "\(system.name) publishes no state schema"
            )
            let eventSchema = try #require(
                Self.member(entry, "eventSchema"),
                "\(system.name) publishes no event schema"
            )
            guard case .array(let examples)? = Self.member(entry, "exampleEvents") else {
                Issue.record("\(system.name) has no examples")
                continue
            }
            groups.append(
                .init(
                    label: "\(system.name) state",
                    schema: stateSchema,
                    instances: [Self.member(entry, "initialState")!]
                )
            )
            groups.append(.init(label: "\(system.name) events", schema: eventSchema, instances: examples))
            guard case .object(let byType)? = Self.member(entry, "eventSchemas") else {
                Issue.record("\(system.name) has no event schemas by type")
                continue
            }
            for example in examples {
                guard case .string(let type)? = Self.member(example, "type"), let schema = byType[type] else {
                    Issue.record("\(system.name): no schema for \(example)")
                    continue
                }
                groups.append(.init(label: "\(system.name) \(type)", schema: schema, instances: [example]))
            }
        }
        let (checked, failures) = try JSONSchemaValidator.validate(groups)
        #expect(failures.isEmpty, "\(failures)")
        #expect(checked == 4 + 2 * 10)
    }

    @Test func aSchemaRefusesWhatTheSystemRefuses() throws {
        let catchEntry = Self.builtIns[1].description
        let stateSchema = try #require(Self.member(catchEntry, "stateSchema"))
        let purple = try JSONValue(parsing: Array(#"{"holder":"purple","throwCount":0}"#.utf8))
        let (_, failures) = try JSONSchemaValidator.validate([
            .init(label: "catch", schema: stateSchema, instances: [purple])
        ])
        #expect(failures.count == 1)
        let counterEvent = try #require(Self.member(Self.builtIns[0].description, "eventSchema"))
        let wrong = try ["{\"type\":\"add\"}", #"{"type":"add","amount":"5"}"#, #"{"type":"jump"}"#].map {
            try JSONValue(parsing: Array($0.utf8))
        }
        let (_, refused) = try JSONSchemaValidator.validate([
            .init(label: "counter", schema: counterEvent, instances: wrong)
        ])
        #expect(refused.count >= 3, "\(refused)")
    }

    /// The words every JSON answer of the suite is checked for (`curl` checks them) include our types' names.
    @Test func answersAreCheckedForOurTypeNames() {
        for name in ["CatchSystem", "WallTime", "JSONValue", "TaggedEventKey", "DecodingError", "Cannot initialize"] {
            #expect(AnswerWords.forbidden.contains(name), "\(name)")
        }
    }

    @Test func systemsPublishTheirSchemasOverHTTP() throws {
        let server = try RunningServer()
        defer { server.stop() }
        let one = try curl(["\(server.base)/v1/systems/catch"])
        #expect(one.status == 200)
        let stateSchema = try #require(one.json["stateSchema"] as? [String: Any])
        #expect(stateSchema["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema")
        let holder = (stateSchema["properties"] as? [String: Any])?["holder"] as? [String: Any]
        #expect(holder?["enum"] as? [String] == ["human", "machine"])
        let events = try #require(one.json["eventSchemas"] as? [String: Any])
        #expect(Set(events.keys) == ["throwToMachine", "schedule", "throwToHuman"])
        let list = try curl(["\(server.base)/v1/systems"])
        let systems = try #require(list.json["systems"] as? [[String: Any]])
        #expect(systems.allSatisfy { $0["stateSchema"] != nil && $0["eventSchema"] != nil })
        let missing = try curl(["\(server.base)/v1/systems/nope"])
        #expect(missing.status == 404)
        #expect((missing.json["detail"] as? String)?.contains("counter") == true)
    }

    @Test func aStateThatDoesNotFitIsRefusedInTheClientsWords() throws {
        let server = try RunningServer()
        defer { server.stop() }
        let purple = try postJSON(
            "\(server.base)/v1/sessions",
            #"{"system":"catch","state":{"holder":"purple","throwCount":0}}"#
        )
        #expect(purple.status == 400)
        #expect(purple.json["pointer"] as? String == "/holder")
        #expect(purple.json["expected"] as? String == #"one of "human", "machine""#)
        #expect(purple.json["sent"] as? String == #""purple""#)
        #expect(!purple.body.contains("Holder"))
        let count = try postJSON("\(server.base)/v1/sessions", #"{"system":"counter","state":{"count":1.5}}"#)
        #expect(count.status == 400)
        #expect(count.json["pointer"] as? String == "/count")
        #expect(count.json["expected"] as? String == "an integer")
        let missing = try postJSON("\(server.base)/v1/sessions", #"{"system":"traffic-light","state":{"phase":"red"}}"#)
        #expect(missing.status == 400)
        #expect(missing.json["sent"] as? String == "nothing")
        let paging = try postJSON("\(server.base)/v1/sessions", #"{"system":"paging","state":{"status":"asleep"}}"#)
        #expect(paging.status == 400)
        #expect(paging.json["pointer"] as? String == "/status")
        #expect(paging.json["expected"] as? String == #"one of "idle", "loading", "failed", "exhausted""#)
        let message = try postJSON(
            "\(server.base)/v1/sessions",
            #"{"system":"paging","state":{"status":"failed","message":5}}"#
        )
        #expect(message.status == 400)
        #expect(message.json["pointer"] as? String == "/message")
        #expect(message.json["expected"] as? String == "a string or null")
    }

    /// The paging state's schema is derived from its declaration (`coding: .stable`, a flattened tagged status), and
    /// takes what its decoding takes: members left out or null read as their defaults, a failure's message is read
    /// only beside "failed"; what one refuses, the other does.
    @Test func thePagingStatesDerivedSchemaTakesWhatItsDecodingTakes() throws {
        let schema = try #require(Self.member(Self.builtIns[3].description, "stateSchema"))
        let fits = try [
            "{}", #"{"status":null,"query":null,"items":null}"#, #"{"status":"failed"}"#,
            #"{"status":"failed","message":"x"}"#, #"{"status":"idle","message":5}"#,
            #"{"items":[1,{"a":null}],"total":null,"visited":["u"],"nextPage":"http://u/2"}"#,
        ].map { try JSONValue(parsing: Array($0.utf8)) }
        let misfits = try [
            #"{"status":"asleep"}"#, #"{"status":"failed","message":5}"#, #"{"query":5}"#, #"{"pagesLoaded":1.5}"#,
            #"{"visited":[1]}"#, #"{"status":7}"#,
        ].map { try JSONValue(parsing: Array($0.utf8)) }
        for state in fits { #expect(throws: Never.self) { try state.decode(PagingSystem.State.self) } }
        for state in misfits { #expect(throws: (any Error).self) { try state.decode(PagingSystem.State.self) } }
        let (checked, failures) = try JSONSchemaValidator.validate([
            .init(label: "fits", schema: schema, instances: fits)
        ])
        #expect(checked == fits.count && failures.isEmpty, "\(failures)")
        // One group per misfit: each must fail (the validator labels its failures by group).
        let (_, refused) = try JSONSchemaValidator.validate(
            misfits.enumerated().map { .init(label: "misfit \($0.offset)", schema: schema, instances: [$0.element]) }
        )
        for (index, state) in misfits.enumerated() {
            #expect(refused.contains { $0.hasPrefix("misfit \(index):") }, "the schema takes \(state)")
        }
    }

    @Test func anEventThatDoesNotFitIsRefusedInTheClientsWords() throws {
        let server = try RunningServer()
        defer { server.stop() }
        let created = try postJSON("\(server.base)/v1/sessions", #"{"system":"counter"}"#)
        let id = try #require(created.json["id"] as? String)
        let events = "\(server.base)/v1/sessions/\(id)/events"
        let text = try postJSON(events, #"{"type":"add","amount":"five"}"#)
        #expect(text.status == 422)
        #expect(text.json["pointer"] as? String == "/amount")
        #expect(text.json["expected"] as? String == "an integer")
        #expect(text.json["sent"] as? String == #""five""#)
        let none = try postJSON(events, #"{"type":"add"}"#)
        #expect(none.status == 422)
        #expect(none.json["pointer"] as? String == "/amount")
        #expect(none.json["sent"] as? String == "nothing")
        let huge = try postJSON(events, #"{"type":"add","amount":1e400}"#)
        #expect(huge.status == 400 || huge.status == 422)
    }
}
