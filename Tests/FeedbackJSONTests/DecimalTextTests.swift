import Testing

@testable import FeedbackJSON

/// `DecimalText` writes what `String(value)` spells, after whatever the buffer already holds.
@Suite struct DecimalTextTests {
    @Test func everyLengthOfNumberIsSpelledAsStringSpellsIt() {
        var values: [UInt64] = Array(0...1_000)
        var power: UInt64 = 10
        for _ in 0..<19 {
            values += [power - 1, power, power + 1]
            power = power &* 10
        }
        values += [UInt64.max - 1, UInt64.max]
        for value in values {
            var out: [UInt8] = Array("x=".utf8)
            DecimalText.append(value, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == "x=\(value)")
        }
    }
}
