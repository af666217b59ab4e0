import Foundation
import Testing

/// What a client must never read in a JSON answer: the name of one of our Swift types, or a Swift decoder's own
/// text (which names them: "Cannot initialize Holder from invalid String value"). Every JSON body a test reads
/// through `curl` is checked, so the whole suite's answers are.
enum AnswerWords {
    /// The types declared in Sources/ whose names cannot be plain words (two capitals or more: `CatchSystem`,
    /// `WallTime`), and the phrases of Foundation's decoding errors.
    static let forbidden: [String] = {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")
        var names: Set<String> = []
        let declaration = try! NSRegularExpression(
            pattern: #"\b(?:struct|enum|class|protocol|actor|typealias)\s+([A-Z][A-Za-z0-9]*)"#
        )
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".swift") {
            guard let text = try? String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8) else {
                continue
            }
            let range = NSRange(text.startIndex..., in: text)
            for match in declaration.matches(in: text, range: range) {
                guard let nameRange = Range(match.range(at: 1), in: text) else { continue }
                let name = String(text[nameRange])
                if name.filter(\.isUppercase).count >= 2, name.count >= 6 { names.insert(name) }
            }
        }
        return names.sorted() + [
            "DecodingError", "Cannot initialize", "Expected to decode", "No value associated with key",
            "debugDescription", "Swift.", "Int64", "Optional<", "Array<", "Dictionary<",
        ]
    }()

    /// Records an issue when `body` (a JSON answer) names one of our types or repeats a decoder's text.
    static func check(_ body: String, contentType: String?, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let contentType, contentType.contains("json") else { return }
        for word in forbidden where body.contains(word) {
            Issue.record("an answer names \"\(word)\": \(body.prefix(300))", sourceLocation: sourceLocation)
        }
    }
}
