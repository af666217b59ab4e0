import FeedbackJSON
import FeedbackLoop
import Foundation
import Systems
import Testing

@testable import SystemKit

/// `@FeedbackEvent`'s own writer (`appendPlainJSON`, what `encodeEvent` uses) against the general way it stands in
/// for (`StateWriter` with its plain options, itself checked against `JSONEncoder`): the same bytes for every case it
/// writes, over literal edge cases and random values (a fixed seed, so a failure repeats).
@Suite(.timeLimit(.minutes(1)))
struct PlainJSONWriterTests {
    /// A payload that is an object of its own, in a field (not flattened).
    @FeedbackSchema
    struct Place: Codable, Equatable, Sendable {
        var name: String
        var floor: Int?
    }

    @FeedbackEvent
    enum Probe: Equatable, Sendable {
        case bare
        case numbers(small: Int32, big: UInt64, signed: Int64, plain: Int, ratio: Double, single: Float)
        case text(value: String, flag: Bool)
        case optional(maybe: Int?, note: String?)
        case nested(place: Place, tags: [String], table: [String: Int])
        case defaulted(count: Int = 3)
        case json(value: JSONValue)
        /// Fields named as the writer's and the reader's own parameters.
        case named(bytes: Int, fields: String?, field0: Bool)
    }

    /// Writes `event` both ways; `writes` says whether the event's own writer must take it.
    private func expectSame<System: FeedbackSystem>(
        _ system: System.Type,
        _ event: System.Event,
        writes: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws where System.Event: TaggedEvent {
        var own: [UInt8] = []
        let wrote = event.appendPlainJSON(to: &own)
        #expect(wrote == writes, "\(event)", sourceLocation: sourceLocation)
        let general = try System.encodeEventGenerally(event)
        let encoded = try System.encodeEvent(event)
        #expect(
            encoded == general,
            "\(String(decoding: encoded, as: UTF8.self)) != \(String(decoding: general, as: UTF8.self))",
            sourceLocation: sourceLocation
        )
        if wrote {
            #expect(own == general, sourceLocation: sourceLocation)
        }
    }

    struct ProbeSystem: FeedbackSystem {
        typealias State = Int
        typealias Event = Probe
        var name: String { "probe" }
        var summary: String { "" }
        var exampleEvents: [Probe] { [] }
        var initialState: Int { 0 }
        static func reduce(_ state: inout Int, _ event: Probe) {}
        func feedbacks(_ environment: SystemEnvironment) -> [Feedback<Int, Probe>] { [] }
    }

    @Test func everyKindOfFieldIsWrittenAsTheGeneralWayWritesIt() throws {
        let cases: [Probe] = [
            .bare,
            .numbers(small: -128, big: .max, signed: .min, plain: 0, ratio: 1.0, single: 0.1),
            .numbers(small: 7, big: 0, signed: -1, plain: Int.max, ratio: -2.5e-300, single: 3e38),
            .text(value: "", flag: true),
            .text(value: #"a "quoted" \ back/slash é 😀 \#u{7F} \#u{1} "#, flag: false),
            .optional(maybe: nil, note: nil),
            .optional(maybe: 0, note: nil),
            .optional(maybe: nil, note: "/"),
            .nested(place: Place(name: "hall", floor: nil), tags: [], table: [:]),
            .nested(place: Place(name: "x", floor: 2), tags: ["a", "b/c"], table: ["k": 1]),
            .defaulted(),
            .named(bytes: 1, fields: nil, field0: true),
            .named(bytes: -1, fields: "f", field0: false),
            .json(value: .object(["b": .int(1), "a": .array([.null, .double(1.5), .string("/")])])),
        ]
        for event in cases {
            try expectSame(ProbeSystem.self, event)
        }
    }

    @Test func whatOnlyTheGeneralWayCanWriteIsLeftToIt() throws {
        // A non-finite number: the writer gives up, `JSONEncoder` decides (as for Foundation's special types).
        var bytes: [UInt8] = []
        #expect(
            !Probe.numbers(small: 0, big: 0, signed: 0, plain: 0, ratio: .nan, single: 1).appendPlainJSON(to: &bytes)
        )
        #expect(throws: (any Error).self) {
            try ProbeSystem.encodeEvent(.numbers(small: 0, big: 0, signed: 0, plain: 0, ratio: .nan, single: 1))
        }
    }

    @Test func builtInEventsWriteThemselves() throws {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            try expectSame(CounterSystem.self, .add(amount: Int.random(in: .min ... .max, using: &random)))
        }
        for event in CounterSystem().exampleEvents { try expectSame(CounterSystem.self, event) }
        for event in TrafficLightSystem().exampleEvents { try expectSame(TrafficLightSystem.self, event) }
        for event in CatchSystem().exampleEvents { try expectSame(CatchSystem.self, event) }
        let queries = ["", "lamp", #"lamp "ü" /x"#, "\u{0}\u{8}\u{C}\t\n", "e\u{301}"]
        for query in queries { try expectSame(PagingSystem.self, .search(query: query)) }
        try expectSame(
            PagingSystem.self,
            .retrying(url: "http://x/a", attempt: 2, reason: "503", delayMilliseconds: 400)
        )
        // A flattened payload writes its own members: left to the general way.
        try expectSame(
            PagingSystem.self,
            .pageLoaded(PagingSystem.Page(url: "u", items: [], stop: "limit")),
            writes: false
        )
    }
}

/// `@FeedbackEvent`'s own reader (`init?(plainFields:)`, what `decodeEvent` tries first) against `init(from:)`: where
/// it reads an event, the decoder reads the same one; where it gives up, the decoder decides (and says what is wrong).
@Suite(.timeLimit(.minutes(1)))
struct PlainFieldsReaderTests {
    typealias Probe = PlainJSONWriterTests.Probe

    private func expectAgreement(_ json: String, reads: Bool, sourceLocation: SourceLocation = #_sourceLocation) throws
    {
        let value = try JSONValue(parsing: Array(json.utf8))
        guard case .object(let members) = value else {
            Issue.record("not an object", sourceLocation: sourceLocation)
            return
        }
        let read = Probe(plainFields: EventFields(members))
        #expect((read != nil) == reads, "\(json)", sourceLocation: sourceLocation)
        let decoded = try? value.decode(Probe.self)
        if let read {
            #expect(read == decoded, "\(json)", sourceLocation: sourceLocation)
        }
        #expect((try? PlainJSONWriterTests.ProbeSystem.decodeEvent(value)) == decoded, sourceLocation: sourceLocation)
    }

    @Test func readsWhatTheDecoderReadsAndLeavesTheRestToIt() throws {
        try expectAgreement(#"{"type":"bare"}"#, reads: true)
        try expectAgreement(#"{"type":"bare","extra":[1]}"#, reads: true)
        try expectAgreement(#"{"type":"text","value":"a/b é","flag":true}"#, reads: true)
        try expectAgreement(#"{"type":"text","flag":false,"value":""}"#, reads: true)
        try expectAgreement(#"{"type":"optional"}"#, reads: true)
        try expectAgreement(#"{"type":"optional","maybe":null,"note":"n"}"#, reads: true)
        try expectAgreement(#"{"type":"optional","maybe":-4}"#, reads: true)
        try expectAgreement(#"{"type":"defaulted"}"#, reads: true)
        try expectAgreement(#"{"type":"defaulted","count":null}"#, reads: true)
        try expectAgreement(#"{"type":"defaulted","count":9}"#, reads: true)
        try expectAgreement(#"{"type":"named","bytes":2,"fields":"x","field0":true}"#, reads: true)
        // What only the decoder may convert, refuse or read.
        try expectAgreement(#"{"type":"defaulted","count":9.0}"#, reads: false)
        try expectAgreement(#"{"type":"defaulted","count":"9"}"#, reads: false)
        try expectAgreement(#"{"type":"optional","maybe":1.5}"#, reads: false)
        try expectAgreement(#"{"type":"text","value":"x"}"#, reads: false)
        try expectAgreement(#"{"type":"text","value":1,"flag":true}"#, reads: false)
        try expectAgreement(#"{"type":"text","value":null,"flag":true}"#, reads: false)
        try expectAgreement(
            #"{"type":"numbers","small":1,"big":2,"signed":3,"plain":4,"ratio":1,"single":1}"#,
            reads: false
        )
        try expectAgreement(#"{"type":"jump"}"#, reads: false)
        try expectAgreement(#"{"type":7}"#, reads: false)
        try expectAgreement(#"{}"#, reads: false)
    }

    @Test func theCounterReadsItsEventsItself() throws {
        for json in [
            #"{"type":"increment"}"#, #"{"type":"decrement"}"#, #"{"type":"add","amount":-9223372036854775808}"#,
        ] {
            let value = try JSONValue(parsing: Array(json.utf8))
            guard case .object(let members) = value else { continue }
            let read = CounterSystem.Event(plainFields: EventFields(members))
            #expect(read != nil)
            #expect(read == (try value.decode(CounterSystem.Event.self)))
            #expect(try CounterSystem.decodeEvent(value) == read)
        }
    }
}
