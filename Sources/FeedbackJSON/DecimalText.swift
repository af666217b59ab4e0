/// The product's one writer of unsigned decimal numbers into bytes: what `String(value)` spells, without making the
/// string (a post's answer, its headers, the access log and the state writer write numbers on every request).
///
/// Pure functions; any thread.
package enum DecimalText {
    /// Appends `value` in decimal (no sign, no leading zeros) to `out`.
    @inlinable
    package static func append(_ value: UInt64, to out: inout [UInt8]) {
        if value < 10 { return out.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value)) }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 20 digits at most, written from the end
        withUnsafeMutableBytes(of: &digits) { buffer in
            var rest = value
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            // As typed bytes: a slice of a raw buffer is appended byte by byte through its iterator.
            let digits = UnsafeRawBufferPointer(rebasing: buffer[start...])
            out.append(contentsOf: digits.assumingMemoryBound(to: UInt8.self))
        }
    }
}
