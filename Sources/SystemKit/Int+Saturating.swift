extension Int {
    /// `self + other`, held at `Int.min` or `Int.max` instead of overflowing: a reducer must be total, and a state
    /// a client gives may hold any integer, so a counter in a state never traps.
    public func saturatingAdding(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }
}
