import FeedbackJSON
import FeedbackLoop
import Foundation
import Systems
import Testing

@testable import SystemKit

/// `@FeedbackSchema`'s own writer (`appendStateJSON`, what `encodeState` uses) against the general way it stands in
/// for (`StateWriter`, itself checked against `JSONEncoder` with sorted keys): the same bytes for every state, over
/// literal edge cases and random values (a fixed seed, so a failure repeats); and the host, generic over the system,
/// reaches the writer.
@Suite(.timeLimit(.minutes(1)))
struct StateJSONWriterTests {
    @FeedbackSchema
    struct Item: Codable, Equatable, Sendable {
        var name: String
        var weight: Double
    }

    @FeedbackSchema
    enum Mood: String, Codable, Sendable {
        case calm
        case upset = "up/set"
    }

    /// Members out of key order, optionals first and last, a nested writer, arrays, a dictionary, an enum with raw
    /// values.
    @FeedbackSchema
    struct Mixed: Codable, Equatable, Sendable {
        var zeta: Int
        var alpha: String?
        var items: [Item]
        var best: Item?
        var table: [String: Int]
        var mood: Mood?
        var big: UInt64
        var flag: Bool
        var tail: Int?
    }

    /// CodingKeys rename and drop members.
    @FeedbackSchema
    struct Renamed: Codable, Equatable, Sendable {
        var url: String
        var secret: Int = 0
        var count: Int
        enum CodingKeys: String, CodingKey {
            case url = "href"
            case count = "Count"
        }
    }

    /// Members named as the writer's own parameter, flag and binding.
    @FeedbackSchema
    struct Awkward: Codable, Equatable, Sendable {
        var bytes: Int?
        var comma: String?
        var present: Int
    }

    /// Stable coding writes a nil optional as null.
    @FeedbackSchema(coding: .stable)
    struct Stable: Codable, Equatable, Sendable {
        var b: Int?
        var a: String = "x"
        var c: [Int]

        init(b: Int?, a: String, c: [Int]) {
            self.b = b
            self.a = a
            self.c = c
        }
    }

    private func expectSame<Value: StateJSONWritable>(
        _ value: Value,
        writes: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var own: [UInt8] = []
        let wrote = value.appendStateJSON(to: &own)
        #expect(wrote == writes, "\(value)", sourceLocation: sourceLocation)
        let general = try StateWriter.write(value)
        let reference = try StateWriterTests.reference(value)
        #expect(general == reference, sourceLocation: sourceLocation)
        if wrote {
            #expect(
                own == general,
                "\(String(decoding: own, as: UTF8.self)) != \(String(decoding: general, as: UTF8.self))",
                sourceLocation: sourceLocation
            )
        }
    }

    @Test func everyShapeIsWrittenAsTheGeneralWayWritesIt() throws {
        try expectSame(
            Mixed(zeta: 0, alpha: nil, items: [], best: nil, table: [:], mood: nil, big: 0, flag: false, tail: nil)
        )
        try expectSame(
            Mixed(
                zeta: -5,
                alpha: #"a "q" \ / é 😀 \#u{1}"#,
                items: [Item(name: "x", weight: 1.0), Item(name: "", weight: -0.5)],
                best: Item(name: "b/c", weight: 2e300),
                table: ["b": 2, "a": 1, "é": 3],
                mood: .upset,
                big: .max,
                flag: true,
                tail: 7
            )
        )
        try expectSame(Renamed(url: "http://x/y", secret: 9, count: 3))
        try expectSame(Awkward(bytes: nil, comma: nil, present: 1))
        try expectSame(Awkward(bytes: 5, comma: ",", present: 0))
        try expectSame(Stable(b: nil, a: "", c: []))
        try expectSame(Stable(b: 4, a: "/", c: [1, 2]))
    }

    @Test func randomStatesMatch() throws {
        var random = SeededRandom(seed: 0x5EED)
        for _ in 0..<300 {
            let optional = { (random: inout SeededRandom) -> Int? in
                random.next() % 3 == 0 ? nil : Int(bitPattern: UInt(random.next()))
            }
            let state = Mixed(
                zeta: optional(&random) ?? 0,
                alpha: random.next() % 2 == 0 ? nil : String(random.next(), radix: 36),
                items: (0..<Int(random.next() % 3)).map { _ in
                    Item(name: String(random.next() % 1000), weight: Double(random.next() % 10_000) / 8)
                },
                best: random.next() % 2 == 0 ? nil : Item(name: "n", weight: 0.1),
                table: random.next() % 2 == 0 ? [:] : ["k": Int(random.next() % 100)],
                mood: [nil, .calm, .upset][Int(random.next() % 3)],
                big: random.next(),
                flag: random.next() % 2 == 0,
                tail: optional(&random)
            )
            try expectSame(state)
        }
    }

    @Test func whatOnlyTheGeneralWayCanWriteIsLeftToIt() throws {
        // A non-finite number: the writer gives up where `StateWriter` does, and `JSONEncoder` decides.
        var bytes: [UInt8] = []
        #expect(!Item(name: "x", weight: .infinity).appendStateJSON(to: &bytes))
        #expect(throws: (any Error).self) { try StateWriter.write(Item(name: "x", weight: .infinity)) }
    }

    /// A state whose writer says so: proves which way a generic caller took.
    struct Marked: Codable, Equatable, Sendable, StateJSONWritable {
        var value = 1
        func appendStateJSON(to bytes: inout [UInt8]) -> Bool {
            bytes.append(contentsOf: #"{"marked":true}"#.utf8)
            return true
        }
    }

    struct MarkedSystem: FeedbackSystem {
        typealias State = Marked
        typealias Event = CounterSystem.Event
        var name: String { "marked" }
        var summary: String { "" }
        var exampleEvents: [Event] { [] }
        var initialState: Marked { Marked() }
        static func reduce(_ state: inout Marked, _ event: Event) {}
        func feedbacks(_ environment: SystemEnvironment) -> [Feedback<Marked, Event>] { [] }
    }

    private static func encodedByTheHost<System: FeedbackSystem>(_ system: System) -> [UInt8] {
        System.encodeState(system.initialState)
    }

    @Test func theHostGenericOverTheSystemReachesTheStatesWriter() throws {
        #expect(String(decoding: Self.encodedByTheHost(MarkedSystem()), as: UTF8.self) == #"{"marked":true}"#)
        #expect(MarkedSystem.encodeStateGenerally(Marked()) == Array(#"{"value":1}"#.utf8))
        var bytes: [UInt8] = []
        #expect(CounterSystem.State(count: -3).appendStateJSON(to: &bytes))
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"count":-3}"#)
    }

    @Test func builtInStatesWriteThemselves() throws {
        try expectSame(CounterSystem.State(count: .min))
        try expectSame(CatchSystem().initialState)
        try expectSame(TrafficLightSystem().initialState)
        // The paging state has a flattened member: it is written the general way, its page writes itself.
        var paging = PagingSystem().initialState
        for event in [PagingSystem.Event.search(query: "lamp /x"), .loadNextPage] {
            PagingSystem.reduce(&paging, event)
            #expect(PagingSystem.encodeState(paging) == PagingSystem.encodeStateGenerally(paging))
        }
        try expectSame(
            PagingSystem.Page(url: "http://x/a", items: [.object(["b": .int(1), "a": .null])], stop: "limit")
        )
    }
}
