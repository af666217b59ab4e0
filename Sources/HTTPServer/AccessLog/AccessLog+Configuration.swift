extension AccessLog {
    /// How the access log formats and writes its lines. A plain value.
    public struct Configuration: Sendable {
        /// How a line looks.
        public var format: Format
        /// The level each line carries (`info`); which lines are written is the caller's choice.
        public var level: String
        /// Lines are written once this many bytes wait (nginx's `buffer=`); 0 writes each line at once.
        public var bufferBytes: Int
        /// Lines are written at least this often (nginx's `flush=`).
        public var flushInterval: Duration
        /// Bytes that may wait for a slow destination; lines beyond are dropped and counted.
        public var maxPendingBytes: Int

        /// Creates a configuration; the defaults buffer 64 KiB for at most a quarter of a second.
        public init(
            format: Format = .text,
            level: String = "info",
            bufferBytes: Int = 64 * 1024,
            flushInterval: Duration = .milliseconds(250),
            maxPendingBytes: Int = 8 * 1024 * 1024
        ) {
            self.format = format
            self.level = level
            self.bufferBytes = bufferBytes
            self.flushInterval = flushInterval
            self.maxPendingBytes = maxPendingBytes
        }
    }
}
