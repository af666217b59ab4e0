/// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed 64-bit hash, here the fingerprint of an idempotent
/// request's body.
///
/// With a secret key a client cannot make two bodies collide on purpose, and with the key the journal keeps
/// (`Journal.fingerprintKey`) a fingerprint computed before a restart equals the one computed after it. The
/// standard library's `Hasher` is SipHash too, but keyed randomly per process, so it cannot be used for that.
///
/// Concurrency: an immutable value.
package struct SipHash: Sendable {
    private let k0: UInt64
    private let k1: UInt64

    /// A hash keyed with 16 bytes (read as two little-endian words, as the reference implementation does).
    package init(key: [UInt8]) {
        precondition(key.count == 16, "a SipHash key is 16 bytes")
        k0 = Self.word(key, at: 0)
        k1 = Self.word(key, at: 8)
    }

    /// A hash keyed randomly, for a server without a journal (fingerprints need not outlive the process).
    package init() {
        var generator = SystemRandomNumberGenerator()
        self.init(key: (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// The SipHash-2-4 of `message`.
    package func hash(_ message: [UInt8]) -> UInt64 {
        var state = State(
            v0: 0x736f_6d65_7073_6575 ^ k0,
            v1: 0x646f_7261_6e64_6f6d ^ k1,
            v2: 0x6c79_6765_6e65_7261 ^ k0,
            v3: 0x7465_6462_7974_6573 ^ k1
        )
        let whole = message.count - message.count % 8
        var offset = 0
        while offset < whole {
            state.compress(Self.word(message, at: offset))
            offset += 8
        }
        var last = UInt64(truncatingIfNeeded: message.count) << 56
        for index in whole..<message.count {
            last |= UInt64(message[index]) << (8 * UInt64(index - whole))
        }
        state.compress(last)
        state.v2 ^= 0xff
        for _ in 0..<4 { state.round() }
        return state.v0 ^ state.v1 ^ state.v2 ^ state.v3
    }

    private static func word(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        var word: UInt64 = 0
        for index in 0..<8 {
            word |= UInt64(bytes[offset + index]) << (8 * UInt64(index))
        }
        return word
    }

    private struct State {
        var v0: UInt64
        var v1: UInt64
        var v2: UInt64
        var v3: UInt64

        /// Two rounds per message word: the "2" of SipHash-2-4.
        mutating func compress(_ word: UInt64) {
            v3 ^= word
            round()
            round()
            v0 ^= word
        }

        mutating func round() {
            v0 &+= v1
            v1 = v1.rotatedLeft(13)
            v1 ^= v0
            v0 = v0.rotatedLeft(32)
            v2 &+= v3
            v3 = v3.rotatedLeft(16)
            v3 ^= v2
            v0 &+= v3
            v3 = v3.rotatedLeft(21)
            v3 ^= v0
            v2 &+= v1
            v1 = v1.rotatedLeft(17)
            v1 ^= v2
            v2 = v2.rotatedLeft(32)
        }
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 {
        (self << count) | (self >> (64 - count))
    }
}
