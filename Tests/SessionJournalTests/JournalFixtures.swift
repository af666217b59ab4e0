import Foundation
import Logging
import SessionJournal

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() {
        var template = Array((NSTemporaryDirectory() + "/journal-test-XXXXXX").utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    func file(_ name: String) -> String { path + "/" + name }
}

enum JournalFixtures {
    static let logger = Logger(label: "journal-test") { _ in SwiftLogNoOpLogHandler() }

    static func creation(_ id: String, epoch: UInt64 = 7) -> SessionCreation {
        SessionCreation(id: id, system: "counter", epoch: epoch, state: #"{"count":0}"#, createdAt: 1_700_000_000)
    }

    static func event(_ id: String, _ revision: UInt64, origin: EventOrigin = .client) -> JournalRecord {
        .event(sessionID: id, revision: revision, event: #"{"type":"add","n":\#(revision)}"#, origin: origin)
    }

    /// A session id as the service makes them: 22 base64url characters.
    static func id(_ number: Int) -> String {
        let digits = String(number)
        return String(repeating: "A", count: 22 - digits.count) + digits
    }

    static func open(
        _ directory: TemporaryDirectory,
        _ configuration: JournalConfiguration = .init()
    ) throws
        -> Journal
    {
        try Journal.open(directory: directory.path, configuration: configuration, logger: logger)
    }

    /// Flips every bit of the byte at `offset` in `path`.
    static func flipByte(at offset: Int, in path: String) throws {
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        data[offset] ^= 0xFF
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// The offset of the first occurrence of `text`'s bytes in `path`.
    static func offset(of text: String, in path: String) throws -> Int? {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.range(of: Data(text.utf8)).map { $0.lowerBound }
    }
}
