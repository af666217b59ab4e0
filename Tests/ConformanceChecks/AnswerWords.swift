import Foundation
public import Testing

/// What a client must never read in a JSON answer: the name of one of our Swift types, or a Swift decoder's own
/// text (which names them: "Cannot initialize Holder from invalid String value"). The test helpers that send
/// requests (`curl`, `CheckedFetcher`, the client tests' transports) check every JSON body they get, so the whole
/// suite's answers are.
///
/// The list is derived from Sources/ by `answer_words.py` beside this file, which the Python tests use too: one
/// derivation for both, never kept by hand.
public enum AnswerWords {
    /// The types declared in Sources/ whose names cannot be plain words (two capitals or more, six characters or
    /// more: `CatchSystem`, `WallTime`), and the phrases of Foundation's decoding errors.
    public static let forbidden: [String] = {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "answer_words.py"
        )
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            preconditionFailure("answer_words.py did not start: \(error)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let words = try? JSONDecoder().decode([String].self, from: data),
            !words.isEmpty
        else { preconditionFailure("answer_words.py failed (exit \(process.terminationStatus))") }
        return words
    }()

    /// The first forbidden word a JSON answer's body holds; nil for any other answer.
    public static func leak(in body: String, contentType: String?) -> String? {
        guard let contentType, contentType.contains("json") else { return nil }
        return forbidden.first { body.contains($0) }
    }

    /// Records an issue, with the body, when `body` (a JSON answer) names one of our types or repeats a decoder's
    /// text.
    public static func check(
        _ body: String,
        contentType: String?,
        sourceLocation: SourceLocation = .init(fileID: #fileID, filePath: #filePath, line: #line, column: #column)
    ) {
        guard let word = leak(in: body, contentType: contentType) else { return }
        Issue.record("an answer names \"\(word)\": \(body.prefix(300))", sourceLocation: sourceLocation)
    }

    /// `check` for a body of bytes.
    public static func check(
        _ body: some Collection<UInt8>,
        contentType: String?,
        sourceLocation: SourceLocation = .init(fileID: #fileID, filePath: #filePath, line: #line, column: #column)
    ) {
        check(String(decoding: body, as: UTF8.self), contentType: contentType, sourceLocation: sourceLocation)
    }
}
