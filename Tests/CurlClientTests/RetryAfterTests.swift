import CurlClient
import Foundation
import Testing
import Upstream

struct RetryAfterTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT
    let date = Date(timeIntervalSince1970: 784_111_777)

    @Test func delaySecondsAreReadAsIs() {
        #expect(RetryAfter.parse("120", now: date) == .seconds(120))
        #expect(RetryAfter.parse(" 0 ", now: date) == .zero)
    }

    @Test func imfFixdateIsMeasuredFromNow() {
        let now = date.addingTimeInterval(-90)
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .seconds(90))
    }

    @Test func obsoleteRFC850DateIsAccepted() {
        let now = date.addingTimeInterval(-5)
        #expect(RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: now) == .seconds(5))
    }

    @Test func asctimeDateIsAccepted() {
        let now = date.addingTimeInterval(-5)
        #expect(RetryAfter.parse("Sun Nov  6 08:49:37 1994", now: now) == .seconds(5))
    }

    @Test func aDateInThePastMeansNoDelay() {
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: date.addingTimeInterval(60)) == .zero)
    }

    @Test func twoDigitYearsFarInTheFutureMeanThePreviousCentury() {
        // In 2026, "99" is 1999 (2099 is more than 50 years ahead), "30" is 2030.
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        #expect(RetryAfter.parse("Friday, 01-Jan-99 00:00:00 GMT", now: now) == .zero)
        let in2030 = RetryAfter.parse("Tuesday, 01-Jan-30 00:00:00 GMT", now: now)
        #expect(in2030 == .seconds(1_893_456_000 - 1_790_000_000))
    }

    @Test func garbageIsRejected() {
        #expect(RetryAfter.parse("soon", now: date) == nil)
        #expect(RetryAfter.parse("-5", now: date) == nil)
        #expect(RetryAfter.parse("Sun, 32 Nov 1994 08:49:37 GMT", now: date) == nil)
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 25:49:37 GMT", now: date) == nil)
        #expect(RetryAfter.parse("", now: date) == nil)
    }
}
