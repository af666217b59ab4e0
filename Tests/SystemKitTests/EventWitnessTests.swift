import FeedbackJSON
import FeedbackLoop
import SystemKit
import Testing

/// `encodeEvent` and `decodeEvent` are requirements of `FeedbackSystem` with defaults constrained on `TaggedEvent`:
/// the host, generic over the system, must reach an event's own writer and reader, not the general way. An event
/// whose writer and reader say so tells which way a generic caller took.
@Suite(.timeLimit(.minutes(1)))
struct EventWitnessTests {
    enum Signal: TaggedEvent, Equatable {
        case fromDecoder
        case fromReader

        static var eventTypes: [String] { ["signal"] }
        static var clientEventTypes: [String] { ["signal"] }
        static var eventCases: [EventCase] { [EventCase("signal")] }

        init(from decoder: any Decoder) throws { self = .fromDecoder }
        init?(plainFields fields: EventFields) { self = .fromReader }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode("from the encoder")
        }

        func appendPlainJSON(to bytes: inout [UInt8]) -> Bool {
            bytes.append(contentsOf: #""from the writer""#.utf8)
            return true
        }
    }

    struct SignalSystem: FeedbackSystem {
        typealias State = Int
        typealias Event = Signal
        var name: String { "signal" }
        var summary: String { "" }
        var exampleEvents: [Signal] { [] }
        var initialState: Int { 0 }
        static func reduce(_ state: inout Int, _ event: Signal) {}
        func feedbacks(_ environment: SystemEnvironment) -> [Feedback<Int, Signal>] { [] }
    }

    private static func decodedByTheHost<System: FeedbackSystem>(
        _: System.Type,
        _ value: JSONValue
    ) throws
        -> System.Event
    {
        try System.decodeEvent(value)
    }

    private static func encodedByTheHost<System: FeedbackSystem>(
        _: System.Type,
        _ event: System.Event
    ) throws
        -> String
    {
        String(decoding: try System.encodeEvent(event), as: UTF8.self)
    }

    @Test func aGenericCallerReachesTheEventsOwnReaderAndWriter() throws {
        #expect(try Self.decodedByTheHost(SignalSystem.self, .object(["type": .string("signal")])) == .fromReader)
        #expect(try Self.encodedByTheHost(SignalSystem.self, .fromDecoder) == #""from the writer""#)
    }

    /// A posted body's members, read where its bytes lie: the host reaches the event's own reader with them too.
    @Test func aPostedBodysMembersReachTheEventsOwnReader() throws {
        func readByTheHost<System: FeedbackSystem>(_: System.Type, _ fields: EventFields) -> System.Event? {
            System.decodeEvent(plain: fields)
        }
        let object = try #require(FlatJSONObject(Array(#"{"type":"signal"}"#.utf8)))
        #expect(readByTheHost(SignalSystem.self, EventFields(object)) == .fromReader)
    }

    @Test func aValueThatIsNoObjectGoesToTheDecoder() throws {
        #expect(try Self.decodedByTheHost(SignalSystem.self, .string("signal")) == .fromDecoder)
    }
}
