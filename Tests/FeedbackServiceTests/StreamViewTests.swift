import FeedbackJSON
import HTTPServer
import Testing

@testable import FeedbackService

/// The pure parts of the stream: frames, the resume decision, views.
struct StreamViewTests {
    private func state(_ count: Int, _ items: [String] = []) -> JSONValue {
        .object(["count": .int(Int64(count)), "items": .array(items.map { .string($0) })])
    }

    @Test func dataWithLineBreaksBecomesOneDataLinePerLine() {
        let frame = StreamFrame.event("snapshot", id: Cursor(epoch: 7, rev: 2), data: Array("a\rb\nc\r\nd".utf8))
        #expect(
            String(decoding: frame, as: UTF8.self) == "event: snapshot\nid: 7-2\ndata: a\ndata: b\ndata: c\ndata: d\n\n"
        )
        #expect(
            String(decoding: StreamFrame.ended(.expired), as: UTF8.self)
                == "event: ended\ndata: {\"reason\":\"expired\"}\n\n"
        )
        // A session that left this replica: its own event, no id (the Last-Event-ID stays the last state's), and a
        // short reconnection time.
        #expect(
            String(decoding: StreamFrame.ended(.moved), as: UTF8.self)
                == "event: moved\nretry: 100\ndata: {\"reason\":\"moved\"}\n\n"
        )
        let prelude = String(decoding: StreamFrame.prelude(comment: "x\ny", retryMilliseconds: 1500), as: UTF8.self)
        #expect(prelude == ": x\n: y\nretry: 1500\n\n")
    }

    @Test func resumeDecisionPlacesEveryKindOfCursor() {
        func decide(_ text: String, mode: StreamRequest.Mode = .patch) -> ResumeOutcome {
            ResumeOutcome.decide(lastEventID: text, epoch: 5, latest: 10, mode: mode) { $0 >= 8 }.outcome
        }
        #expect(decide("5-10") == .current)
        #expect(decide("5-9") == .patch)
        #expect(decide("5-9", mode: .snapshot) == .snapshot)
        #expect(decide("5-3") == .snapshot)
        #expect(decide("6-9") == .unknown)
        #expect(decide("5-11") == .unknown)
        #expect(decide("junk") == .unknown)
        #expect(decide("") == .unknown)
    }

    @Test func viewPatchesFromAnyKeptRevisionAndForgetsOldOnes() throws {
        let view = StreamView(epoch: 1, select: [])
        for rev in 0...40 {
            #expect(view.offer(rev: UInt64(rev), state: state(rev).serialized()) { state(rev) })
        }
        #expect(view.latestRev == 40)
        #expect(view.previousRev == 39)
        #expect(!view.canPatch(from: 8))
        #expect(view.patch(from: 8) == nil)
        let frame = try #require(view.patch(from: 20))
        let text = String(decoding: frame, as: UTF8.self)
        #expect(
            text
                == "event: patch\nid: 1-40\ndata: {\"base\":20,\"rev\":40,\"ops\":[{\"op\":\"replace\",\"path\":\"/count\",\"value\":40}]}\n\n"
        )
        #expect(
            String(decoding: view.snapshot(), as: UTF8.self).hasSuffix(
                "data: {\"rev\":40,\"state\":{\"count\":40,\"items\":[]}}\n\n"
            )
        )
    }

    @Test func selectionViewChangesOnlyWhenTheSelectedPartsDo() throws {
        let pointer = try JSONPointer("/items/0")
        let view = StreamView(epoch: 1, select: [pointer])
        #expect(view.offer(rev: 0, state: []) { state(0) })
        #expect(!view.offer(rev: 1, state: []) { state(1) })
        #expect(view.offer(rev: 2, state: []) { state(2, ["a"]) })
        #expect(!view.offer(rev: 3, state: []) { state(3, ["a", "b"]) })
        #expect(view.latestRev == 2)
        #expect(
            String(decoding: view.snapshot(), as: UTF8.self).hasSuffix(
                "data: {\"rev\":2,\"select\":{\"/items/0\":\"a\"}}\n\n"
            )
        )
        let patch = String(decoding: try #require(view.patch(from: 0)), as: UTF8.self)
        #expect(patch.contains(#"{"base":0,"rev":2,"ops":[{"op":"replace","path":"/~1items~10","value":"a"}]}"#))
    }

    /// A fan-out pass finds each frame by its key: in order up to `linearKeys` keys, through a dictionary beyond, and
    /// both ways give every key the position it was added at (a pass over subscribers of many selections, or at many
    /// revisions, has that many).
    @Test func aPassFindsEveryFrameByItsKeyAcrossTheSwitchToADictionary() {
        var keys = FrameIndex<Int>()
        let count = 3 * FrameIndex<Int>.linearKeys + 5
        for added in 0..<count {
            #expect(keys.position(of: added * 7) == nil)
            #expect(keys.add(added * 7) == added)
            // Every key added so far, after each addition: the first ones found again once the dictionary took over.
            for earlier in 0...added {
                #expect(keys.position(of: earlier * 7) == earlier)
            }
            #expect(keys.position(of: added * 7 + 1) == nil)
        }
    }
}
