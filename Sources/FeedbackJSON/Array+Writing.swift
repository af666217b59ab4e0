extension Array where Element == UInt8 {
    /// The bytes `write` writes into `count` bytes of scratch room (it returns how many it wrote), with room for
    /// `spare` more: allocated through `reserveCapacity`, which is specialised, where `init(unsafeUninitializedCapacity:)`
    /// and `init(repeating:count:)` look the storage class up in the runtime's metadata cache each time (about 230
    /// instructions, counted by callgrind), then copied once. For the hot paths' small buffers (a request's fields, a
    /// post's answer).
    @inlinable
    package init(writing count: Int, spare: Int = 0, _ write: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        self = []
        reserveCapacity(count + spare)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { scratch in
            let written = write(scratch)
            append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<written]))
        }
    }
}
