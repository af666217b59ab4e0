extension CurlFetcher {
    /// Limits and timeouts that apply to every request of one client.
    ///
    /// A value type: safe to pass anywhere. Timeouts are in milliseconds; 0 disables the timeout.
    public struct Configuration: Sendable, Hashable {
        /// How long to wait for a TCP (and TLS) connection.
        public var connectTimeoutMilliseconds: Int
        /// The longest a buffered ``CurlFetcher/fetch(_:)`` may take, from start to the last body byte.
        public var totalTimeoutMilliseconds: Int
        /// The longest a ``CurlFetcher/stream(_:)`` may take in total; 0 (the default) lets streams run for as long
        /// as data keeps coming, watched by the low-speed limit.
        public var streamTotalTimeoutMilliseconds: Int
        /// A transfer slower than this many bytes per second for ``lowSpeedTimeSeconds`` fails as timed out.
        /// Paused streams (waiting for their reader) are exempt. 0 disables the check.
        public var lowSpeedBytesPerSecond: Int
        /// The period over which ``lowSpeedBytesPerSecond`` is measured.
        public var lowSpeedTimeSeconds: Int
        /// The largest decoded body ``CurlFetcher/fetch(_:)`` accepts.
        public var maxBodyBytes: Int
        /// The longest line ``UpstreamStream/lines`` accepts.
        public var maxLineBytes: Int
        /// How many bytes a stream buffers before pausing the transfer until its reader catches up.
        public var streamBufferBytes: Int
        /// Redirects followed per request; 0 (the default) returns a 3xx response as it is.
        public var maxRedirects: Int
        /// Open connections to one host at most; further requests wait for one to be free. 0 means no limit.
        public var maxConnectionsPerHost: Int
        /// Open connections in total at most; further requests wait. 0 means no limit.
        public var maxConnectionsTotal: Int
        /// Idle connections kept for reuse.
        public var maxIdleConnections: Int

        /// Creates a configuration; every parameter has a server-friendly default.
        public init(
            connectTimeoutMilliseconds: Int = 5_000,
            totalTimeoutMilliseconds: Int = 30_000,
            streamTotalTimeoutMilliseconds: Int = 0,
            lowSpeedBytesPerSecond: Int = 1,
            lowSpeedTimeSeconds: Int = 60,
            maxBodyBytes: Int = 16 << 20,
            maxLineBytes: Int = 1 << 20,
            streamBufferBytes: Int = 256 << 10,
            maxRedirects: Int = 0,
            maxConnectionsPerHost: Int = 64,
            maxConnectionsTotal: Int = 512,
            maxIdleConnections: Int = 128
        ) {
            self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
            self.totalTimeoutMilliseconds = totalTimeoutMilliseconds
            self.streamTotalTimeoutMilliseconds = streamTotalTimeoutMilliseconds
            self.lowSpeedBytesPerSecond = lowSpeedBytesPerSecond
            self.lowSpeedTimeSeconds = lowSpeedTimeSeconds
            self.maxBodyBytes = maxBodyBytes
            self.maxLineBytes = maxLineBytes
            self.streamBufferBytes = streamBufferBytes
            self.maxRedirects = maxRedirects
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.maxConnectionsTotal = maxConnectionsTotal
            self.maxIdleConnections = maxIdleConnections
        }
    }
}
