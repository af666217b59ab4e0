/// Splits bytes into lines at LF, dropping the LF and a CR before it.
///
/// A value type used by one reader at a time.
struct LineSplitter {
    private var buffer: [UInt8] = []
    private var start = 0
    private var searchFrom = 0
    private var finished = false

    /// Bytes buffered that do not form a complete line yet.
    var pendingBytes: Int { buffer.count - start }

    mutating func append(_ bytes: [UInt8]) {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeSubrange(0..<start)
            searchFrom -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// No more bytes will come: the rest, if any, is the last line.
    mutating func finish() {
        finished = true
    }

    mutating func nextLine() -> ArraySlice<UInt8>? {
        if let newline = buffer[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
            var end = newline
            if end > start, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            let line = buffer[start..<end]
            start = newline + 1
            searchFrom = start
            return line
        }
        searchFrom = buffer.count
        if finished, start < buffer.count {
            let line = buffer[start...]
            start = buffer.count
            return line
        }
        return nil
    }
}
