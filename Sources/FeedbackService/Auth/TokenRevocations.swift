import FeedbackJSON
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Each session's token generation: server-minted tokens carry the generation they were minted in, and revoking a
/// session's tokens moves it on, so every token minted before no longer checks out. A session never revoked is at
/// generation 0 and has no entry. Revoking also sends `reauth` to the session's open streams
/// (`StreamRegistry.reauth`).
///
/// With a data directory the table is kept in `token-revocations.json` there, rewritten whole (write and rename) at
/// each revocation, which is rare, and read at start: revocations survive a restart. Without one they live in
/// memory only. Thread-safe: one `Mutex`, held across the file's write so that writes land in order.
final class TokenRevocations: Sendable {
    private let generations: Mutex<[SessionID: UInt64]>
    /// The file, or nil without a data directory.
    let file: String?

    init(file: String? = nil) {
        self.file = file
        generations = Mutex(file.flatMap(Self.load) ?? [:])
    }

    /// The generation tokens of `id` must carry.
    func generation(of id: SessionID) -> UInt64 {
        generations.withLock { $0[id] ?? 0 }
    }

    /// Revokes every token of `id`; throws when the revocation holds but could not be written to the file.
    func revoke(_ id: SessionID) throws(APIError) {
        try update { generations in
            generations[id] = (generations[id] ?? 0) + 1
            return true
        }
    }

    /// Forgets a deleted session's generation (its tokens die with its epoch anyway).
    func forget(_ id: SessionID) {
        try? update { generations in
            generations.removeValue(forKey: id) != nil
        }
    }

    private func update(_ change: (inout [SessionID: UInt64]) -> Bool) throws(APIError) {
        let problem = generations.withLock { generations -> APIError? in
            guard change(&generations), let file else { return nil }
            return Self.save(generations, to: file)
        }
        if let problem { throw problem }
    }

    private static func save(_ generations: [SessionID: UInt64], to file: String) -> APIError? {
        let members = generations.mapValues { JSONValue.int(Int64(clamping: $0)) }
        let bytes = JSONValue.object(Dictionary(uniqueKeysWithValues: members.map { ($0.key.description, $0.value) }))
            .serialized()
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: file), options: .atomic)
            return nil
        } catch {
            return APIError(
                .journalUnavailable,
                "the revocation holds until this server restarts, but \(file) could not be written; retry",
                retryAfter: 1
            )
        }
    }

    private static func load(_ file: String) -> [SessionID: UInt64]? {
        guard let data = FileManager.default.contents(atPath: file),
            case .object(let members)? = try? JSONValue(parsing: Array(data))
        else { return nil }
        var generations: [SessionID: UInt64] = [:]
        for (key, value) in members {
            if let id = SessionID(key), case .int(let generation) = value, generation > 0 {
                generations[id] = UInt64(generation)
            }
        }
        return generations
    }
}
