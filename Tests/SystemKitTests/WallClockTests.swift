import FeedbackLoop
import Foundation
import SystemKit
import Testing

@Suite(.timeLimit(.minutes(1)))
struct WallClockTests {
    private let origin = WallTime(millisecondsSince1970: 1_767_225_600_000)

    @Test func wallTimeIsAnIntegerOfMillisecondsInJSON() throws {
        let data = try JSONEncoder().encode(["at": origin])
        #expect(String(decoding: data, as: UTF8.self) == #"{"at":1767225600000}"#)
        #expect(try JSONDecoder().decode([String: WallTime].self, from: data) == ["at": origin])
    }

    @Test func arithmeticIsToTheMillisecondAndSaturates() {
        #expect((origin + .milliseconds(1500)).millisecondsSince1970 == 1_767_225_601_500)
        #expect((origin - .seconds(1)).millisecondsSince1970 == 1_767_225_599_000)
        #expect(origin.duration(to: origin + .seconds(3)) == .seconds(3))
        #expect(WallTime(millisecondsSince1970: .max) + .seconds(1) == WallTime(millisecondsSince1970: .max))
        #expect(WallTime(millisecondsSince1970: .min) - .seconds(1) == WallTime(millisecondsSince1970: .min))
        #expect(origin + .seconds(Int64.max) == WallTime(millisecondsSince1970: .max))
    }

    @Test func theSystemWallTimeIsTheRealTime() {
        let real = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(abs(WallClock.system.now().millisecondsSince1970 - real) < 60_000)
    }

    @Test func aFollowingWallClockMovesWithItsClockAndWakesAtTheDeadline() async throws {
        let clock = TestClock()
        let wall = WallClock.following(clock, from: origin)
        clock.advance(by: .seconds(2))
        #expect(wall.now() == origin + .seconds(2))
        let woken = Task { try await wall.sleep(until: origin + .seconds(5)) }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(3))
        try await woken.value
        #expect(wall.now() == origin + .seconds(5))
        try await wall.sleep(until: origin)  // a past deadline: at once
    }

    @Test func aSystemSleepForAPastDeadlineReturnsAtOnceAndACancelledOneThrows() async {
        await #expect(throws: Never.self) { try await WallClock.system.sleep(until: origin) }
        let sleeper = Task { try await WallClock.system.sleep(until: WallTime.now() + .seconds(3600)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
