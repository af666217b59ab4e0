import Synchronization

extension Atomic where Value == Int {
    /// Adds one unless the count has reached `limit`, by compare-and-exchange (two callers never both take the last
    /// place); whether it added. The one admission step of streams: the server's total and a session's limit.
    func increment(below limit: Int) -> Bool {
        while true {
            let current = load(ordering: .relaxed)
            guard current < limit else { return false }
            if compareExchange(expected: current, desired: current + 1, ordering: .relaxed).exchanged { return true }
        }
    }
}
