public import FeedbackJSON

/// A system's schema version and the migrations that reach it: what turns a journaled state or event of any older
/// version into JSON of this build's version, or says in words why it cannot.
///
/// A value type: safe to share.
public struct SchemaVersions: Sendable {
    /// The version this build writes.
    public let current: Int
    private let steps: [Int: SchemaMigration]

    /// The versions of `system`.
    public init<System: FeedbackSystem>(of system: System) {
        self.init(current: system.schemaVersion, migrations: system.migrations)
    }

    /// Version `current` reached through `migrations` (one per step, by `from`; a later duplicate is ignored).
    public init(current: Int, migrations: [SchemaMigration]) {
        self.current = current
        var steps: [Int: SchemaMigration] = [:]
        for migration in migrations where steps[migration.from] == nil { steps[migration.from] = migration }
        self.steps = steps
    }

    /// What is being read: a state or an event.
    public enum Part: String, Sendable {
        case state
        case event
    }

    /// `value`, written at `version`, as JSON of `current`: unchanged when `version` is current; through every step
    /// from `version` on otherwise. Throws when `version` is newer than this build or below 1, when a step is
    /// missing, or when a step fails (with the path it failed at).
    public func upcast(_ value: JSONValue, _ part: Part, from version: Int) throws(SchemaError) -> JSONValue {
        if version == current { return value }
        guard version <= current else { throw SchemaError(.newer, part: part, version: version, current: current) }
        guard version >= 1 else { throw SchemaError(.unreachable, part: part, version: version, current: current) }
        var value = value
        for step in version..<current {
            guard let migration = steps[step] else {
                throw SchemaError(.unreachable, part: part, version: version, current: current, missing: step)
            }
            do {
                value = try (part == .state ? migration.state : migration.event)(value)
            } catch {
                throw SchemaError(.failed, part: part, version: version, current: current, failure: error, at: step)
            }
        }
        return value
    }
}

/// Why a journaled state or event cannot be read by this build.
public struct SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure.
    public enum Code: String, Sendable, Equatable {
        /// Written by a newer build: this one does not know the version.
        case newer
        /// No chain of migrations leads from the version to this build's.
        case unreachable
        /// A migration refused the value.
        case failed
    }

    /// The kind of failure.
    public let code: Code
    /// A state or an event.
    public let part: SchemaVersions.Part
    /// The version the value was written at.
    public let version: Int
    /// This build's version.
    public let current: Int
    /// The JSON Pointer where a migration failed (`""` for the whole value), nil for the other kinds.
    public let path: String?
    /// What happened, in words.
    public let message: String

    init(
        _ code: Code,
        part: SchemaVersions.Part,
        version: Int,
        current: Int,
        missing: Int? = nil,
        failure: MigrationFailure? = nil,
        at step: Int? = nil
    ) {
        self.code = code
        self.part = part
        self.version = version
        self.current = current
        path = failure?.path
        switch code {
        case .newer:
            message =
                "its \(part.rawValue) was written at schema version \(version) by a newer build; this build reads "
                + "versions up to \(current)"
        case .unreachable:
            message =
                "its \(part.rawValue) was written at schema version \(version) and no migration leads from "
                + (missing.map { "version \($0) to \($0 + 1)" } ?? "it") + " (this build is at version \(current))"
        case .failed:
            message =
                "its \(part.rawValue) of schema version \(version) did not migrate from version \(step ?? version) "
                + "to \((step ?? version) + 1) \(failure.map(\.description) ?? "")"
        }
    }

    public var description: String { message }
}
