import Foundation

/// Finds the `feedback-host` binary a `LocalInstance` starts: the path in `FEEDBACKHOST_BINARY`, else a
/// `feedback-host` on `PATH`, else the package's own build (beside the running test bundle, or under this package's
/// `.build/debug` and `.build/release`).
enum BinaryLocator {
    static let name = "feedback-host"

    static func locate(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(LocalInstanceError)
        -> URL
    {
        if let given = environment["FEEDBACKHOST_BINARY"], !given.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: given) else {
                throw LocalInstanceError(
                    .binaryNotFound,
                    "FEEDBACKHOST_BINARY is \(given), which is not an executable file: build it with "
                        + "`swift build --product feedback-host` or point the variable at the binary"
                )
            }
            return URL(fileURLWithPath: given)
        }
        let candidates = pathCandidates(environment["PATH"] ?? "") + buildCandidates()
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) {
            return found
        }
        throw LocalInstanceError(
            .binaryNotFound,
            "no feedback-host binary: set FEEDBACKHOST_BINARY to its path, put it on PATH, or build it with "
                + "`swift build --product feedback-host` (looked in: "
                + candidates.map(\.path).joined(separator: ", ") + ")"
        )
    }

    private static func pathCandidates(_ path: String) -> [URL] {
        path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
    }

    /// The build directory of the running tests (`swift test` runs them from `.build/<triple>/debug`, where the
    /// package's executables are), then this package's own `.build`.
    private static func buildCandidates() -> [URL] {
        var directories: [URL] = []
        if let executable = Bundle.main.executableURL {
            var directory = executable.deletingLastPathComponent()
            // On Apple platforms the tests run inside an .xctest bundle within the build directory.
            while directory.pathComponents.count > 1 && directory.path.contains(".xctest") {
                directory = directory.deletingLastPathComponent()
            }
            directories.append(directory)
        }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        directories += ["debug", "release"].map { package.appendingPathComponent(".build/\($0)") }
        return directories.map { $0.appendingPathComponent(name) }
    }
}
