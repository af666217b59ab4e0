/// Byte classes of RFC 9110/9112, as lookup tables. Pure, immutable, shared by every queue.
enum ASCII {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let sp = UInt8(ascii: " ")
    static let htab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")
    static let semicolon = UInt8(ascii: ";")
    static let comma = UInt8(ascii: ",")

    /// tchar: the bytes allowed in a token (method, field name, transfer coding).
    static let token = alphanumerics(and: "!#$%&'*+-.^_`|~")

    /// field-vchar, SP, HTAB and obs-text: what a field value may hold. No CTL, no DEL, no CR/LF/NUL.
    @inline(__always)
    static func isFieldValue(_ b: UInt8) -> Bool { b == 0x09 || (b >= 0x20 && b != 0x7F) }

    /// The bytes a request line may hold besides its CRLF: visible ASCII and SP.
    @inline(__always)
    static func isRequestLine(_ b: UInt8) -> Bool { b >= 0x20 && b <= 0x7E }

    /// The words the byte tricks below use: 0x01 and 0x80 in every byte (constants, not globals to initialize).
    @inline(__always)
    static var ones: UInt64 { 0x0101_0101_0101_0101 }
    @inline(__always)
    static var highs: UInt64 { 0x8080_8080_8080_8080 }

    /// Whether all eight bytes of `word` lie in `lowest...0x7E` (`lowest` at most 0x7E): no byte below it and none
    /// above 0x7E, each found by the bit tricks of "Bit Twiddling Hacks" (a byte below n: `(x - n·0x01…) & ~x &
    /// 0x80…`; above 0x7E: `((x + 0x01…) | x) & 0x80…`). Exact as a verdict on the word: true only when every byte
    /// passes.
    @inline(__always)
    static func allVisible(_ word: UInt64, from lowest: UInt8) -> Bool {
        let below = (word &- ones &* UInt64(lowest)) & ~word & highs
        let above = ((word &+ ones) | word) & highs
        return below | above == 0
    }

    /// Whether all eight bytes of `word` pass `isRequestLine` (0x20 to 0x7E).
    @inline(__always)
    static func allRequestLine(_ word: UInt64) -> Bool { allVisible(word, from: 0x20) }

    /// Whether all eight bytes of `word` are ones a request target may hold (0x21 to 0x7E, the `target` table).
    @inline(__always)
    static func allTarget(_ word: UInt64) -> Bool { allVisible(word, from: 0x21) }

    /// The eight bytes at `base + at`, the first the least significant whatever the machine's byte order.
    @inline(__always)
    static func word(_ base: UnsafePointer<UInt8>, _ at: Int) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(base + at).loadUnaligned(as: UInt64.self))
    }

    /// The index of the first CR at or after `start` in `bytes`, which holds one: eight bytes at a time while eight
    /// remain, the first zero byte of `word ^ CR…` found by `(x - 0x01…) & ~x & 0x80…`, whose lowest set bit is exact
    /// (bits above it may be borrows).
    static func firstCR(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var at = start
        if let base = bytes.baseAddress {
            while at + 8 <= bytes.count {
                let x = word(base, at) ^ (ones &* 0x0D)
                let found = (x &- ones) & ~x & highs
                if found != 0 { return at + found.trailingZeroBitCount / 8 }
                at += 8
            }
        }
        while bytes[at] != cr { at += 1 }
        return at
    }

    /// Whether all eight bytes of `word` pass `isFieldValue` without being a tab: no byte below 0x20 and no 0x7F (a
    /// word with a tab fails here and is judged byte by byte).
    @inline(__always)
    static func allFieldValue(_ word: UInt64) -> Bool {
        let below = (word &- ones &* 0x20) & ~word & highs
        let deletes = word ^ (ones &* 0x7F)
        let delete = (deletes &- ones) & ~deletes & highs
        return below | delete == 0
    }

    /// Whether every byte of `bytes` passes `isFieldValue`: eight at a time while the word test allows, the rest (and
    /// a word with a tab) byte by byte.
    static func allFieldValue(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var at = 0
        if let base = bytes.baseAddress {
            while at + 8 <= bytes.count, allFieldValue(word(base, at)) { at += 8 }
        }
        while at < bytes.count {
            guard isFieldValue(bytes[at]) else { return false }
            at += 1
        }
        return true
    }

    /// `isFieldValue` as a table (for loops that look up a byte class per byte of a slice).
    static let fieldValue: [Bool] = (0..<256).map { isFieldValue(UInt8($0)) }

    /// `isRequestLine` as a table.
    static let requestLine: [Bool] = (0..<256).map { isRequestLine(UInt8($0)) }

    /// What a Host field value may hold (RFC 3986 authority without userinfo): unreserved, pct-encoded, sub-delims
    /// except the comma (a list is never one host), `:` and the brackets of an IP literal.
    static let host = alphanumerics(and: "-._~%!$&'()*+;=:[]")

    /// A table of ASCII letters, digits and the bytes of `others`.
    private static func alphanumerics(and others: String) -> [Bool] {
        (0..<256).map { b in
            switch UInt8(b) {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                others.utf8.contains(UInt8(b))
            }
        }
    }

    /// The bytes a request target may hold: visible ASCII only.
    static let target: [Bool] = (0..<256).map { b in b >= 0x21 && b <= 0x7E }

    static func lower(_ b: UInt8) -> UInt8 {
        b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") ? b | 0x20 : b
    }

    static func isWhitespace(_ b: UInt8) -> Bool { b == sp || b == htab }

    static func hexValue(_ b: UInt8) -> Int? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(b - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(b - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(b - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// Whether `bytes` equal `name` ignoring ASCII case.
    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        let p = name.utf8Start
        for i in 0..<bytes.count where lower(bytes[i]) != p[i] { return false }
        return true
    }

    /// Trims SP and HTAB from both ends of a range of `buffer`.
    static func trimmed(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lo = range.lowerBound
        var hi = range.upperBound
        while lo < hi, isWhitespace(buffer[lo]) { lo += 1 }
        while hi > lo, isWhitespace(buffer[hi - 1]) { hi -= 1 }
        return lo..<hi
    }
}
