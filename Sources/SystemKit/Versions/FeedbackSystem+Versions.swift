import Foundation

extension FeedbackSystem {
    /// Version 1: a system that never changed its JSON.
    public var schemaVersion: Int { 1 }
    /// None.
    public var migrations: [SchemaMigration] { [] }

    /// The state as the host writes it everywhere (snapshots, answers, journal, fixtures): compact JSON with sorted
    /// keys, slashes not escaped. Equal states give equal bytes, which the state checksums rely on.
    /// `StateWriter` writes it (the same bytes as `canonicalEncoder`, at a fraction of the cost); what it leaves
    /// aside, `canonicalEncoder` writes.
    public static func encodeState(_ state: State) -> [UInt8] {
        if let bytes = try? StateWriter.write(state) { return bytes }
        // A Codable state whose encoding throws is a bug of the system, not of a client.
        guard let data = try? canonicalEncoder.encode(state) else {
            preconditionFailure("the state of system \(Self.self) failed to encode")
        }
        return Array(data)
    }

    /// An event as the journal writes it: what `JSONEncoder()` with its default options writes. `StateWriter` writes
    /// it when it can promise the same bytes (an event whose objects have one member each, such as
    /// `{"type":"increment"}`: with more, `JSONEncoder` orders them by its dictionary, differently in each process);
    /// else `JSONEncoder` does. Throws what `JSONEncoder` throws.
    public static func encodeEvent(_ event: Event) throws -> [UInt8] {
        if let bytes = try? StateWriter.write(event, options: .plain) { return bytes }
        return Array(try plainEncoder.encode(event))
    }
}

/// The encoder of `encodeEvent`, shared (`JSONEncoder.encode` is thread-safe).
let plainEncoder = JSONEncoder()

/// The encoder of `encodeState`, shared (`JSONEncoder.encode` is thread-safe).
let canonicalEncoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return encoder
}()

/// The checksum of an encoded state that the journal keeps with each event and a fixture with each step: 64-bit
/// FNV-1a over the bytes. It finds the first revision at which a replay's state differs from the recorded one
/// (not an integrity check against tampering). It is the product's one FNV-1a: the web page's entity tags are its hex
/// too.
public enum StateChecksum {
    /// The checksum of `bytes`.
    @inlinable
    public static func of(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// `value` as 16 lowercase hexadecimal digits, as fixtures write it.
    public static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
