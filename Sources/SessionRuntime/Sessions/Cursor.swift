import FeedbackJSON

/// A position in a session's history, `{epoch}-{rev}`: the SSE event id, the ETag, and what `If-Match` and
/// `Last-Event-ID` carry.
///
/// The epoch changes whenever a session's history restarts, so an old cursor is never taken for a new one.
public struct Cursor: Sendable, Hashable, CustomStringConvertible {
    /// The history this revision belongs to.
    public var epoch: UInt64
    /// The number of reduces since the session began.
    public var rev: UInt64

    /// Creates a cursor.
    public init(epoch: UInt64, rev: UInt64) {
        self.epoch = epoch
        self.rev = rev
    }

    /// Parses `{epoch}-{rev}` (decimal, no sign, no leading zeros beyond a lone `0`); nil for anything else.
    public init?(_ text: some StringProtocol) {
        let parts = Substring(text).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let epoch = Self.number(parts[0]), let rev = Self.number(parts[1]) else { return nil }
        self.init(epoch: epoch, rev: rev)
    }

    /// Parses an HTTP entity tag holding a cursor: `"e-r"` or `W/"e-r"`.
    public init?(entityTag text: some StringProtocol) {
        var tag = Substring(text)
        if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
        guard tag.count >= 2, tag.first == "\"", tag.last == "\"" else { return nil }
        self.init(tag.dropFirst().dropLast())
    }

    private static func number(_ text: Substring) -> UInt64? {
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        if text.utf8.count > 1 && text.utf8.first == UInt8(ascii: "0") { return nil }
        return UInt64(text)
    }

    public var description: String { "\(epoch)-\(rev)" }

    /// The cursor as a strong entity tag, for `ETag`.
    public var entityTag: String { "\"\(epoch)-\(rev)\"" }

    /// The most bytes `writeEntityTag` writes: two quotes, a dash and two numbers of up to 20 digits.
    package static let entityTagCapacity = 43

    /// Writes `entityTag`'s bytes at `out`, which has room for `entityTagCapacity`, and returns how many it wrote: an
    /// answer's `ETag` written straight into its fields' one allocation.
    package func writeEntityTag(to out: UnsafeMutablePointer<UInt8>) -> Int {
        out[0] = UInt8(ascii: "\"")
        var at = 1 + DecimalText.write(epoch, to: out + 1)
        out[at] = UInt8(ascii: "-")
        at += 1 + DecimalText.write(rev, to: out + at + 1)
        out[at] = UInt8(ascii: "\"")
        return at + 1
    }

    /// Appends `entityTag`'s bytes to `out`, making no string (`writeEntityTag` into stack room, copied once).
    public func appendEntityTag(to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.entityTagCapacity) { room in
            out.append(contentsOf: UnsafeBufferPointer(rebasing: room[..<writeEntityTag(to: room.baseAddress!)]))
        }
    }
}

extension Cursor {
    /// Whether an `If-None-Match` or `If-Match` header value names this cursor (a list of tags, or `*`).
    public func matches(entityTags header: String) -> Bool {
        for element in header.split(separator: ",") {
            let tag = element.trimmingSpaces()
            if tag == "*" || Cursor(entityTag: tag) == self { return true }
        }
        return false
    }
}

extension Substring {
    package func trimmingSpaces() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
