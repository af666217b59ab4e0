import FeedbackJSON
import Foundation
import SystemKit
import Systems
import Testing

/// Every built-in event through the coding `@FeedbackEvent` derives: byte for byte what the hand-written coding it
/// replaced journaled (the literals below are that coding's output, `System.encodeEvent`'s order: `"type"` first,
/// then the fields as declared), and back to the same event.
@Suite struct EventWireFormatTests {
    private static func expectWire<System: FeedbackSystem>(
        _ system: System.Type,
        _ cases: [(System.Event, String)],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws where System.Event: Equatable {
        for (event, wire) in cases {
            let bytes = try System.encodeEvent(event)
            #expect(String(decoding: bytes, as: UTF8.self) == wire, sourceLocation: sourceLocation)
            #expect(
                try JSONDecoder().decode(System.Event.self, from: Data(wire.utf8)) == event,
                sourceLocation: sourceLocation
            )
            #expect(
                try JSONValue(parsing: Array(wire.utf8)).decode(System.Event.self) == event,
                sourceLocation: sourceLocation
            )
            let foundation = try JSONEncoder().encode(event)
            #expect(
                try JSONDecoder().decode(System.Event.self, from: foundation) == event,
                sourceLocation: sourceLocation
            )
        }
    }

    @Test func counterEventsKeepTheirWireFormat() throws {
        try Self.expectWire(
            CounterSystem.self,
            [
                (.increment, #"{"type":"increment"}"#),
                (.decrement, #"{"type":"decrement"}"#),
                (.add(amount: 5), #"{"type":"add","amount":5}"#),
                (.add(amount: Int.min), #"{"type":"add","amount":-9223372036854775808}"#),
            ]
        )
        #expect(CounterSystem.Event.eventTypes == ["increment", "decrement", "add"])
        #expect(CounterSystem().clientEventTypes == ["increment", "decrement", "add"])
    }

    @Test func catchEventsKeepTheirWireFormat() throws {
        try Self.expectWire(
            CatchSystem.self,
            [
                (.throwToMachine, #"{"type":"throwToMachine"}"#),
                (
                    .schedule(until: WallTime(millisecondsSince1970: 1_795_894_233_628)),
                    #"{"type":"schedule","until":1795894233628}"#
                ),
                (.throwToHuman, #"{"type":"throwToHuman"}"#),
            ]
        )
        #expect(CatchSystem.Event.eventTypes == ["throwToMachine", "schedule", "throwToHuman"])
        #expect(CatchSystem().clientEventTypes == ["throwToMachine"])
    }

    @Test func trafficLightEventsKeepTheirWireFormat() throws {
        try Self.expectWire(
            TrafficLightSystem.self,
            [
                (.start, #"{"type":"start"}"#),
                (.stop, #"{"type":"stop"}"#),
                (.schedule(until: WallTime(millisecondsSince1970: 1)), #"{"type":"schedule","until":1}"#),
                (.advance(next: WallTime(millisecondsSince1970: 2)), #"{"type":"advance","next":2}"#),
                (.advance(next: nil), #"{"type":"advance"}"#),
            ]
        )
        // Journals written before deadlines existed hold `advance` with `next` null or absent.
        #expect(
            try JSONValue(parsing: Array(#"{"type":"advance","next":null}"#.utf8)).decode(TrafficLightSystem.Event.self)
                == .advance(next: nil)
        )
        #expect(TrafficLightSystem.Event.eventTypes == ["start", "stop", "schedule", "advance"])
        #expect(TrafficLightSystem().clientEventTypes == ["start", "stop"])
    }

    @Test func pagingEventsKeepTheirWireFormat() throws {
        let page = PagingSystem.Page(
            url: "http://x/a?b=1",
            items: [.object(["id": .int(1)]), .string("s"), .array([.bool(true), .null, .double(1.5)])],
            next: "http://x/2",
            total: 3
        )
        try Self.expectWire(
            PagingSystem.self,
            [
                (.search(query: #"lamp "ü" /x"#), #"{"type":"search","query":"lamp \"ü\" \/x"}"#),
                (.loadNextPage, #"{"type":"loadNextPage"}"#),
                (.retry, #"{"type":"retry"}"#),
                (.clear, #"{"type":"clear"}"#),
                (
                    .pageLoaded(page),
                    #"{"type":"pageLoaded","url":"http:\/\/x\/a?b=1","items":[{"id":1},"s",[true,null,1.5]],"next":"http:\/\/x\/2","total":3}"#
                ),
                (
                    .pageLoaded(PagingSystem.Page(url: "u", items: [], stop: "limit")),
                    #"{"type":"pageLoaded","url":"u","items":[],"stop":"limit"}"#
                ),
                (
                    .retrying(url: "u", attempt: 2, reason: "503", delayMilliseconds: 400),
                    #"{"type":"retrying","url":"u","attempt":2,"reason":"503","delayMilliseconds":400}"#
                ),
                (.pageFailed(url: "u", message: "gone"), #"{"type":"pageFailed","url":"u","message":"gone"}"#),
            ]
        )
        #expect(
            PagingSystem.Event.eventTypes == [
                "search", "loadNextPage", "retry", "clear", "pageLoaded", "retrying", "pageFailed",
            ]
        )
        #expect(PagingSystem().clientEventTypes == ["search", "loadNextPage", "retry", "clear"])
    }

    @Test func unknownTypeStillNamesTheKnownOnes() {
        #expect(throws: DecodingError.self) {
            try JSONValue(parsing: Array(#"{"type":"jump"}"#.utf8)).decode(CounterSystem.Event.self)
        }
    }
}
