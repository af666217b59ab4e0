package import FeedbackJSON
import SessionRuntime

/// One way of looking at a session's states: the whole state, or a selection of parts (`?select=`). It keeps the
/// last few distinct values with their revisions, so that a client behind by a little gets one patch, and frames
/// each event once for every subscriber of the view.
///
/// Not thread-safe: owned by its `StreamHub`'s queue.
package final class StreamView {
    struct Entry {
        let rev: UInt64
        /// The value as compact JSON: the state, or the `{"/pointer": value, …}` object of a selection.
        let json: [UInt8]
        /// `{"client": last sequence, …}` of the numbered posts the revision includes (issue 34), framed as is.
        var clients: [UInt8]? = nil
        /// The parsed value, made when first needed for a diff.
        var value: JSONValue?
    }

    /// Values kept for patches to clients that are behind.
    static let capacity = 32

    let epoch: UInt64
    /// The selected parts; empty for the whole state.
    let select: [JSONPointer]
    /// Subscribers reading this view.
    var subscriberCount = 0
    /// The hub queue's alone (above): no run-time exclusivity check for each subscriber of a fan-out, whose decision
    /// reads it (`latestRev`, `canPatch(from:)`).
    @exclusivity(unchecked)
    private(set) var entries: [Entry] = []
    private var snapshotFrame: [UInt8]?
    private var patchFrames: [UInt64: [UInt8]] = [:]

    /// The system's schema hash (`FeedbackSystem.schemaHash`), carried by `snapshot` events.
    let schema: String?

    package init(epoch: UInt64, select: [JSONPointer], schema: String? = nil) {
        self.epoch = epoch
        self.select = select
        self.schema = schema
    }

    /// The key views are shared under: subscribers with the same selection read the same view.
    static func key(_ select: [JSONPointer]) -> String {
        select.map(\.description).joined(separator: "\u{0}")
    }

    /// The revision at which the view's current value appeared; nil before the first state.
    package var latestRev: UInt64? { entries.last?.rev }

    /// The revision before the latest, which every subscriber that kept up has.
    package var previousRev: UInt64? { entries.count >= 2 ? entries[entries.count - 2].rev : nil }

    /// Takes a new state of the session; returns whether the view's value changed (a selection may not).
    package func offer(rev: UInt64, state json: [UInt8], clients: [UInt8]? = nil, value: () -> JSONValue) -> Bool {
        let entry: Entry
        if select.isEmpty {
            entry = Entry(rev: rev, json: json, clients: clients, value: nil)
        } else {
            let selection = Self.selection(select, of: value())
            if let last = entries.last, last.value == selection { return false }
            entry = Entry(rev: rev, json: selection.serialized(), clients: clients, value: selection)
        }
        if entries.count == Self.capacity { entries.removeFirst() }
        entries.append(entry)
        snapshotFrame = nil
        patchFrames.removeAll(keepingCapacity: true)
        return true
    }

    /// The `snapshot` event of the current value.
    package func snapshot() -> [UInt8] {
        if let snapshotFrame { return snapshotFrame }
        guard let last = entries.last else { return [] }
        let frame = StreamFrame.snapshot(
            cursor: Cursor(epoch: epoch, rev: last.rev),
            member: select.isEmpty ? "state" : "select",
            json: last.json,
            clients: last.clients,
            schema: schema
        )
        snapshotFrame = frame
        return frame
    }

    /// Whether a patch from `base` to the current value can be made (the value at `base` is still kept).
    package func canPatch(from base: UInt64) -> Bool {
        entries.contains { $0.rev == base }
    }

    /// The `patch` event from the value at `base` to the current one; nil when `base` is no longer kept.
    package func patch(from base: UInt64) -> [UInt8]? {
        if let frame = patchFrames[base] { return frame }
        guard let index = entries.firstIndex(where: { $0.rev == base }), let last = entries.indices.last else {
            return nil
        }
        let ops = JSONPatch.diff(from: value(at: index), to: value(at: last)).json.serialized()
        let frame = StreamFrame.patch(
            cursor: Cursor(epoch: epoch, rev: entries[last].rev),
            base: base,
            ops: ops,
            clients: entries[last].clients
        )
        patchFrames[base] = frame
        return frame
    }

    private func value(at index: Int) -> JSONValue {
        if let value = entries[index].value { return value }
        // The JSON came from the state's encoder, so it parses; `null` only if a system's encoding were broken.
        let value = (try? JSONValue(parsing: entries[index].json)) ?? .null
        entries[index].value = value
        return value
    }

    /// The selection of `state`: each pointer's text mapped to its value, `null` where it points at nothing.
    static func selection(_ pointers: [JSONPointer], of state: JSONValue) -> JSONValue {
        var members: [String: JSONValue] = [:]
        for pointer in pointers { members[pointer.description] = pointer.resolve(in: state) ?? .null }
        return .object(members)
    }

    /// Seeds a new selection view from the whole-state view's history, so cursors of recent states still resume.
    func seed(from whole: StreamView) {
        for index in whole.entries.indices {
            let rev = whole.entries[index].rev
            _ = offer(rev: rev, state: []) { whole.value(at: index) }
        }
    }
}
