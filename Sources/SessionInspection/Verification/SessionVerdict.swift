public import FeedbackJSON

/// What replaying one journaled session through this build found.
public struct SessionVerdict: Sendable, Equatable {
    /// The four outcomes.
    public enum Outcome: String, Sendable, Equatable, CaseIterable {
        /// Every kept state and every state checksum was reproduced, nothing needed a migration.
        case identical
        /// Reproduced, after migrating records of an older schema version.
        case migrated
        /// The replay gave another state than the journaled one.
        case diverged
        /// Something did not decode (or migrate): `failure` says what and where.
        case failed
    }

    /// Where a replay first differed from the journal.
    public struct Divergence: Sendable, Equatable {
        /// The first revision whose replayed state differs from the journaled one (by its checksum, or by a kept
        /// snapshot when the events carry no checksum).
        public var revision: UInt64
        /// The kept snapshot the replay was compared with, nil when no kept snapshot follows `revision`.
        public var comparedAt: UInt64?
        /// RFC 6902 patch from the journaled state at `comparedAt` to the replayed one; nil without `comparedAt`.
        public var patch: JSONPatch?
    }

    /// The session's id.
    public var session: String
    /// Its system's name.
    public var system: String
    /// The outcome.
    public var outcome: Outcome
    /// Events reduced.
    public var events: Int
    /// Where it diverged (for `.diverged`).
    public var divergence: Divergence?
    /// What failed and where (for `.failed`).
    public var failure: String?
}
