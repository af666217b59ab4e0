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
            let end = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + buffer.count
            let count = writeBackward(value, before: end)
            out.append(contentsOf: UnsafeBufferPointer(start: end - count, count: count))
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
        return writeBackward(value, before: out + count)
    }

    /// Writes `value`'s digits so that the last lies just before `end`, two at a time (one division by 100 a pair,
    /// not one by 10 a digit: an entity tag's epoch has nineteen), and returns how many it wrote.
    @inlinable
    static func writeBackward(_ value: UInt64, before end: UnsafeMutablePointer<UInt8>) -> Int {
        // "00", "01", ... "99": the pairs' digits, a constant in the binary (no lazy global to check).
        let pairs: StaticString = """
            00010203040506070809101112131415161718192021222324252627282930313233343536373839\
            40414243444546474849505152535455565758596061626364656667686970717273747576777879\
            8081828384858687888990919293949596979899
            """
        let table = pairs.utf8Start
        var at = end
        var rest = value
        while rest >= 100 {
            let quotient = rest / 100
            let pair = Int(truncatingIfNeeded: rest &- quotient &* 100) &* 2
            at -= 2
            at[0] = table[pair]
            at[1] = table[pair &+ 1]
            rest = quotient
        }
        if rest >= 10 {
            let pair = Int(truncatingIfNeeded: rest) &* 2
            at -= 2
            at[0] = table[pair]
            at[1] = table[pair &+ 1]
        } else {
            at -= 1
            at[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest)
        }
        return end - at
    }
}
