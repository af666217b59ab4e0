/// The defaults of what a system declares for inspection (issue 32).
extension FeedbackSystem {
    /// The server's setting decides.
    public var historyRetention: String? { nil }
    /// Nothing is redacted.
    public var redactedPointers: [String] { [] }
}
