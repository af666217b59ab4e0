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

    /// A `Date` inside: `JSONEncoder` special-cases it, so only the general way writes it.
    struct Stamp: Codable, Equatable, Sendable, JSONSchemaDescribing {
        var date: Date
        static var jsonSchema: JSONSchema { .type("number") }
        init(_ date: Date) { self.date = date }
        init(from decoder: any Decoder) throws { date = try decoder.singleValueContainer().decode(Date.self) }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(date)
        }
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
        case when(at: Stamp)
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
            .json(value: .object(["b": .int(1), "a": .array([.null, .double(1.5), .string("/")])])),
        ]
        for event in cases {
            try expectSame(ProbeSystem.self, event)
        }
    }

    @Test func whatOnlyTheGeneralWayCanWriteIsLeftToIt() throws {
        // Non-finite numbers and Foundation's special types: the writer gives up, `JSONEncoder` decides.
        var bytes: [UInt8] = []
        #expect(
            !Probe.numbers(small: 0, big: 0, signed: 0, plain: 0, ratio: .nan, single: 1).appendPlainJSON(to: &bytes)
        )
        bytes = []
        let dated = Probe.when(at: Stamp(Date(timeIntervalSince1970: 12.5)))
        #expect(!dated.appendPlainJSON(to: &bytes))
        // `JSONEncoder` writes it, its members in an order of its own: compared as what it reads back as.
        #expect(try JSONDecoder().decode(Probe.self, from: Data(ProbeSystem.encodeEvent(dated))) == dated)
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
