extension String {
    /// Calls `body` with the string's UTF-8 bytes: where they lie for a native string, which `withUTF8` cannot do
    /// without a mutable copy of the string (a retain and a release, on every hot path that reads a string's bytes),
    /// else from the contiguous copy `withUTF8` makes.
    @inlinable
    package func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return copy.withUTF8(body)
    }
}
