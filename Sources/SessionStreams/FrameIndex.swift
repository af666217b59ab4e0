/// The frames of one fan-out pass by their keys (`StreamHub.FrameKey`), in the order they were made: a pass has a few,
/// looked up in order while there are at most `linearKeys`, through a dictionary beyond. A dictionary from the start
/// cost a hash a lookup and an allocation a pass, which every catch-up of a few held-back subscribers and every new
/// subscriber's first frame (a pass of its own) paid; many keys in one pass (subscribers of many selections, or at
/// many revisions) would make a search in order cost a pass the product of subscribers and keys.
///
/// Not thread-safe: a value of one pass, on the hub's queue.
package struct FrameIndex<Key: Hashable> {
    /// How many keys are looked up in order before the dictionary takes over.
    package static var linearKeys: Int { 16 }

    private var keys: [Key] = []
    private var positions: [Key: Int] = [:]

    package init() {}

    /// Where `key` was added (0 for the first), or nil when it never was.
    package func position(of key: Key) -> Int? {
        keys.count <= Self.linearKeys ? keys.firstIndex(of: key) : positions[key]
    }

    /// Adds `key`, which is not there yet, and returns its position.
    package mutating func add(_ key: Key) -> Int {
        let position = keys.count
        keys.append(key)
        if keys.count > Self.linearKeys {
            if positions.isEmpty {
                for (index, known) in keys.enumerated() { positions[known] = index }
            } else {
                positions[key] = position
            }
        }
        return position
    }
}
