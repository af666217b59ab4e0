import Foundation
import Synchronization

/// A private PostgreSQL server for tests, from Debian's `postgresql` package: `initdb` into a temporary directory
/// (as an unprivileged user made with `useradd` when the tests run as root, since PostgreSQL refuses to run as root),
/// then `postgres` itself as this process's child on 127.0.0.1 and a free port, its socket directory inside the
/// temporary directory. Never a system service, never a fixed port. One server per test process, started by the first
/// test that asks (`shared()`), stopped by its pid (SIGQUIT, PostgreSQL's immediate shutdown) when the process exits.
/// Each test takes a database of its own (`makeDatabase()`).
///
/// Missing binaries are a failure, not a skip: `make test` installs the package.
///
/// Concurrency: thread-safe; the shared server is made once under a `Mutex`.
public final class PostgresServer: Sendable {
    /// The superuser `initdb` made, who owns every test database.
    public let user: String
    /// The port on 127.0.0.1.
    public let port: Int
    /// The server's process id.
    public let pid: Int32
    let directory: URL
    let binaries: URL
    private let databases = Atomic<Int>(0)

    private static let made = Mutex<Result<PostgresServer, PostgresServerError>?>(nil)

    /// The process's server, started on first use.
    public static func shared() throws -> PostgresServer {
        try made.withLock { made in
            if let made { return made }
            let result = Result { () throws(PostgresServerError) in try PostgresServer.start() }
            made = result
            if case .success(let server) = result {
                stopAtExit = server.pid
                // Should this process die without running `atexit` (a crash), a watchdog stops the server.
                stopWatchdogAtExit =
                    (try? spawn(
                        "/bin/sh",
                        ["-c", "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; kill -QUIT \(server.pid)"],
                        as: nil,
                        log: "/dev/null"
                    )) ?? 0
                removeAtExit = server.directory.path
                atexit {
                    if stopWatchdogAtExit > 0 { kill(stopWatchdogAtExit, SIGKILL) }
                    guard stopAtExit > 0 else { return }
                    kill(stopAtExit, SIGQUIT)
                    // Its directory goes once it has exited (at most 5 s): every run left one behind in /tmp.
                    for _ in 0..<100 where !hasExited(stopAtExit) { usleep(50_000) }
                    if hasExited(stopAtExit), let directory = removeAtExit {
                        try? FileManager.default.removeItem(atPath: directory)
                    }
                }
            }
            return result
        }.get()
    }

    /// A new, empty database on the shared server: its `postgres://` URL.
    public static func makeDatabase() throws -> String {
        let server = try shared()
        return try server.makeDatabase()
    }

    /// A new, empty database: its `postgres://` URL.
    public func makeDatabase() throws -> String {
        let name = "test_\(getpid())_\(databases.add(1, ordering: .relaxed).newValue)"
        _ = try run(
            binaries.appendingPathComponent("psql").path,
            [
                "-h", "127.0.0.1", "-p", "\(port)", "-U", user, "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-q",
                "-c", "CREATE DATABASE \(name)",
            ]
        )
        return "postgres://\(user)@127.0.0.1:\(port)/\(name)"
    }

    /// Runs `sql` in the database of `url` with psql and returns what it printed (unaligned, tuples only).
    public func psql(_ url: String, _ sql: String) throws -> String {
        try run(binaries.appendingPathComponent("psql").path, [url, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql])
    }

    private init(user: String, port: Int, pid: Int32, directory: URL, binaries: URL) {
        self.user = user
        self.port = port
        self.pid = pid
        self.directory = directory
        self.binaries = binaries
    }

    private static func start() throws(PostgresServerError) -> PostgresServer {
        let binaries = try findBinaries()
        let asRoot = getuid() == 0
        let user = asRoot ? "feedbackhost-test" : (ProcessInfo.processInfo.environment["USER"] ?? "postgres")
        let directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("feedbackhost-pg-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            if asRoot {
                if (try? run("/usr/bin/id", ["-u", user])) == nil {
                    try run(
                        "/usr/sbin/useradd",
                        ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user]
                    )
                }
                try run("/bin/chown", [user, directory.path])
            }
            let data = directory.appendingPathComponent("data").path
            try run(
                binaries.appendingPathComponent("initdb").path,
                ["-D", data, "-A", "trust", "-U", user, "--no-sync", "-E", "UTF8", "--locale=C"],
                as: asRoot ? user : nil
            )
            var lastError: PostgresServerError?
            for _ in 0..<3 {
                let port = try freePort()
                let pid = try spawn(
                    binaries.appendingPathComponent("postgres").path,
                    [
                        "-D", data, "-p", "\(port)", "-k", directory.path, "-c", "listen_addresses=127.0.0.1",
                        "-c", "fsync=off", "-c", "max_connections=200",
                    ],
                    as: asRoot ? user : nil,
                    log: directory.appendingPathComponent("server.log").path
                )
                let server = PostgresServer(
                    user: user,
                    port: port,
                    pid: pid,
                    directory: directory,
                    binaries: binaries
                )
                if server.waitReady() { return server }
                kill(pid, SIGQUIT)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
                let log =
                    (try? String(contentsOfFile: directory.appendingPathComponent("server.log").path, encoding: .utf8))
                    ?? ""
                lastError = PostgresServerError(message: "postgres did not start on port \(port): \(log.suffix(800))")
            }
            throw lastError!
        } catch let error as PostgresServerError {
            throw error
        } catch {
            throw PostgresServerError(message: "\(error)")
        }
    }

    /// Polls `pg_isready` (a bounded number of tries) until the server accepts connections.
    private func waitReady() -> Bool {
        for _ in 0..<200 {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { return false }
            let ready = try? Self.run(
                binaries.appendingPathComponent("pg_isready").path,
                ["-h", "127.0.0.1", "-p", "\(port)", "-q"]
            )
            if ready != nil { return true }
            usleep(50_000)
        }
        return false
    }

    private static func findBinaries() throws(PostgresServerError) -> URL {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted()
        for version in versions.reversed() {
            let bin = URL(fileURLWithPath: "\(root)/\(version)/bin")
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("postgres").path) {
                return bin
            }
        }
        throw PostgresServerError(
            message: "no PostgreSQL server under \(root)/*/bin: install Debian's postgresql package (make deps does)"
        )
    }

    private static func freePort() throws(PostgresServerError) -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw PostgresServerError(message: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw PostgresServerError(message: "bind 127.0.0.1:0: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts `path` as a child (through `setpriv` as `user` when given), its output to `log`; returns its pid.
    private static func spawn(
        _ path: String,
        _ arguments: [String],
        as user: String?,
        log: String
    ) throws(PostgresServerError) -> Int32 {
        let process = Self.process(path, arguments, as: user)
        if log != "/dev/null" { _ = FileManager.default.createFile(atPath: log, contents: nil) }
        let handle = FileHandle(forWritingAtPath: log)
        process.standardOutput = handle
        process.standardError = handle
        do {
            try process.run()
        } catch {
            throw PostgresServerError(message: "cannot start \(path): \(error)")
        }
        return process.processIdentifier
    }

    /// `path` with `arguments`, through `setpriv` as `user` when given.
    private static func process(_ path: String, _ arguments: [String], as user: String?) -> Process {
        let process = Process()
        if let user {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user)", "--regid=\(user)", "--init-groups", "--", path] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
        }
        return process
    }

    @discardableResult
    private static func run(_ path: String, _ arguments: [String], as user: String? = nil) throws -> String {
        let process = Self.process(path, arguments, as: user)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw PostgresServerError(message: "\(path) \(arguments.joined(separator: " ")) failed: \(text)")
        }
        return text
    }

    private func run(_ path: String, _ arguments: [String]) throws -> String {
        try Self.run(path, arguments)
    }
}

/// The pid `atexit` stops and the directory it removes (a C callback cannot capture).
nonisolated(unsafe) private var stopAtExit: Int32 = 0
nonisolated(unsafe) private var stopWatchdogAtExit: Int32 = 0
nonisolated(unsafe) private var removeAtExit: String?

/// Whether process `pid` has ended: reaped (here or by Foundation), or a zombie waiting to be.
private func hasExited(_ pid: Int32) -> Bool {
    var status: Int32 = 0
    if waitpid(pid, &status, WNOHANG) == pid || kill(pid, 0) != 0 { return true }
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
    return stat.contains(") Z ")
}

/// Why the private server could not be started or used.
public struct PostgresServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// The message.
    public var description: String { message }
}
