import Glibc

/// The process's descriptor limit (`RLIMIT_NOFILE`) and the connection cap it allows.
///
/// A value; `current()` and `raiseSoftToHard()` touch process-wide state and are called once, by `Server.start()`.
struct DescriptorLimit: Sendable, Equatable {
    /// The soft limit: one more `open`/`accept` fails with `EMFILE`. `Int.max` when unlimited.
    var soft: Int
    /// The ceiling the soft limit may be raised to without privilege.
    var hard: Int

    /// The limit now; nil when `getrlimit` fails.
    static func current() -> DescriptorLimit? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return DescriptorLimit(soft: Self.count(limit.rlim_cur), hard: Self.count(limit.rlim_max))
    }

    /// Raises the soft limit to the hard one, as Go's runtime does at start (1.19 and later): 1,024 is a common
    /// soft default that says nothing about what the process may use. Returns the limit afterwards (unchanged when
    /// the kernel refuses, e.g. an unlimited hard limit above `fs.nr_open`).
    static func raiseSoftToHard() -> DescriptorLimit? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised)
        }
        return current()
    }

    /// The connections the soft limit leaves room for: `configured`, lowered to the limit less `reserve`, at least 1.
    func connectionCap(configured: Int, reserve: Int) -> Int {
        guard soft != Int.max else { return configured }
        return max(1, min(configured, soft - max(0, reserve)))
    }

    /// `RLIM_INFINITY` (all ones) and anything beyond `Int` count as unlimited.
    private static func count(_ value: rlim_t) -> Int {
        value > rlim_t(Int.max) ? Int.max : Int(value)
    }
}
