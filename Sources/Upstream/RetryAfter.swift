public import Foundation

/// Reads an HTTP `Retry-After` value: delay seconds, or an HTTP date (IMF-fixdate, and the obsolete RFC 850 and
/// asctime formats that RFC 9110 requires recipients to accept).
///
/// A namespace of pure functions: safe to call from anywhere.
public enum RetryAfter {
    /// How long to wait from `now`, never negative; nil when the value is neither form.
    public static func parse(_ value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            guard let seconds = Int(text) else { return .seconds(Int.max / 2) }
            return .seconds(seconds)
        }
        guard let date = HTTPDate.parse(text, now: now) else { return nil }
        let delay = date.timeIntervalSince(now)
        return delay > 0 ? .milliseconds(Int((delay * 1000).rounded())) : .zero
    }
}

/// Parses the three HTTP date formats (RFC 9110 5.6.7) without a locale-dependent formatter.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    static func parse(_ text: String, now: Date) -> Date? {
        let parts = text.split(whereSeparator: { $0 == " " }).map(String.init)
        if parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT" {
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            return date(day: parts[1], month: parts[2], year: parts[3], time: parts[4], now: now)
        }
        if parts.count == 4, parts[0].hasSuffix(","), parts[3] == "GMT" {
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            let dayMonthYear = parts[1].split(separator: "-").map(String.init)
            guard dayMonthYear.count == 3 else { return nil }
            return date(day: dayMonthYear[0], month: dayMonthYear[1], year: dayMonthYear[2], time: parts[2], now: now)
        }
        if parts.count == 5 {
            // asctime: Sun Nov  6 08:49:37 1994
            return date(day: parts[2], month: parts[1], year: parts[4], time: parts[3], now: now)
        }
        return nil
    }

    private static func date(day: String, month: String, year: String, time: String, now: Date) -> Date? {
        guard let day = Int(day), (1...31).contains(day),
            let monthIndex = months.firstIndex(of: month.lowercased()),
            var year = Int(year)
        else { return nil }
        if year < 100 {
            // RFC 9110: a two-digit year more than 50 years in the future means the previous century.
            let currentYear = Int(now.timeIntervalSince1970 / 31_556_952) + 1970
            year += 2000
            if year > currentYear + 50 { year -= 100 }
        }
        let clock = time.split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2])
        else { return nil }
        let days = daysSinceEpoch(year: year, month: monthIndex + 1, day: day)
        let seconds = days * 86_400 + clock[0] * 3_600 + clock[1] * 60 + clock[2]
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's civil-days algorithm).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
