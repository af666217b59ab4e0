extension FeedbackSystem {
    /// A hash of the system's name and `schemaVersion` (64-bit FNV-1a of `name`, a zero byte and the version in
    /// decimal, as 16 lowercase hex digits). The server's snapshots carry it (`"schema"`), so a client built against
    /// another version of the system sees that its reducer may differ and stops predicting (docs/CLIENT.md).
    public var schemaHash: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Array(name.utf8) + [0] + Array(String(schemaVersion).utf8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
