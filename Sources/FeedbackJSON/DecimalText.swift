/// The product's one writer of unsigned decimal numbers into bytes: what `String(value)` spells, without making the
/// string (a post's answer, its headers, the access log and the state writer write numbers on every request).
///
/// Pure functions; any thread.
package enum DecimalText {
    /// Appends `value` in decimal (no sign, no leading zeros) to `out`.
    @inlinable
    package static func append(_ value: UInt64, to out: inout [UInt8]) {
        if value < 10 { return out.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value)) }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for the 20 digits of the largest
        withUnsafeMutableBytes(of: &digits) { buffer in
            let base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            out.append(contentsOf: UnsafeBufferPointer(start: base, count: write(value, to: base)))
        }
    }

    /// Writes `value` in decimal at `out`, which has room for its digits (20 at most), and returns how many it wrote.
    @inlinable
    package static func write(_ value: UInt64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var count = 1
        var scale: UInt64 = 10
        while count < 20, value >= scale {
            count += 1
            scale = scale &* 10
        }
        var rest = value
        for index in stride(from: count - 1, through: 0, by: -1) {
            out[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
        return count
    }
}
