import Synchronization

/// The server's own base URL, known once the listener is bound (`--port 0` picks the port then).
///
/// Written once by `ServiceApplication.start()`, read by every new session's environment; a `Mutex` guards it.
final class LocalBaseURL: Sendable {
    private let url = Mutex<String?>(nil)
    private let host: String

    /// A wildcard host is reached over loopback.
    init(host: String) {
        self.host = host.isEmpty || host == "0.0.0.0" ? "127.0.0.1" : host
    }

    /// `http://HOST:PORT`, or nil before the server listens.
    var value: String? { url.withLock { $0 } }

    /// Records the bound port.
    func set(port: Int) {
        url.withLock { $0 = "http://\(host):\(port)" }
    }
}
