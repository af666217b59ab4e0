/// A session's encoded states (under `SessionSnapshots.cached`): the latest revision's snapshot, which `GET`, a post's
/// answer and the memory budget go by, and one older step's, kept for the step's second reader.
///
/// A step's state is encoded once and read twice: by the recorder (its checksum, a snapshot record) and then by the
/// stream's observer (its frame), in that order, in the loop's observer calls. A post's batch is tried first and its
/// last state cached as the latest before any step is observed, so the batch's earlier steps are older than the
/// latest: each is kept here between its two readers. A hit on the latest forgets it (the batch is past), and so
/// does a newer latest. Not nested in the generic `SystemSession`, whose code runs unspecialised behind
/// `any HostedSession` and would look up a nested type's metadata at every use.
@usableFromInline
struct SnapshotCache: Sendable {
    @usableFromInline var latest: SessionSnapshot?
    @usableFromInline var older: SessionSnapshot?

    @inlinable
    init(latest: SessionSnapshot?) {
        self.latest = latest
        older = nil
    }

    /// What the cache holds of a revision.
    @usableFromInline
    enum Lookup {
        /// Its snapshot.
        case hit(SessionSnapshot)
        /// Nothing, and the latest is newer: a snapshot made of it is kept as the older one.
        case behindLatest
        /// Nothing, and it is newer than the latest (or there is none): a snapshot made of it is the latest.
        case newer
    }

    /// What the cache holds of `rev`; a hit on the latest forgets the older snapshot.
    @inlinable
    mutating func lookup(_ rev: UInt64) -> Lookup {
        // The revisions read in place: `latest!.rev` would copy the whole snapshot out first.
        guard let latestRev = latest?.cursor.rev else { return .newer }
        if latestRev == rev {
            if older != nil { older = nil }
            return .hit(latest!)
        }
        if older?.cursor.rev == rev { return .hit(older!) }
        return latestRev > rev ? .behindLatest : .newer
    }

    /// Keeps `snapshot` as the older one, unless it is the latest's revision or newer (the latest only grows).
    @inlinable
    mutating func keepOlder(_ snapshot: SessionSnapshot) {
        guard let latestRev = latest?.cursor.rev, latestRev > snapshot.cursor.rev else { return }
        older = snapshot
    }
}
