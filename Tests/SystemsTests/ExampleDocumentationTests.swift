import Foundation
import Testing

/// docs/SYSTEMS.md shows the code of the example package (Examples/PollHost), which `make test` builds and tests:
/// the guide's code is that package's, file for file.
@Suite struct ExampleDocumentationTests {
    @Test func theGuideShowsTheExamplePackagesCode() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let guide = try String(contentsOf: root.appendingPathComponent("docs/SYSTEMS.md"), encoding: .utf8)
        for file in ["Package.swift", "Sources/Poll/PollSystem.swift", "Sources/poll-host/main.swift"] {
            let code = try String(
                contentsOf: root.appendingPathComponent("Examples/PollHost").appendingPathComponent(file),
                encoding: .utf8
            )
            #expect(
                guide.contains("```swift\n" + code.trimmingCharacters(in: .whitespacesAndNewlines) + "\n```"),
                "\(file)"
            )
        }
    }
}

/// Every schema a built-in system, the guide's reminder or the example package publishes is derived by the macros:
/// none of their sources names `JSONSchema` or conforms a type to `JSONSchemaDescribing` by hand.
@Suite struct DerivedSchemaTests {
    @Test func noSystemWritesASchemaByHand() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let folders = ["Sources/Systems", "Examples/PollHost/Sources", "Examples/PollHost/Tests", "Tests/SystemsTests"]
        var checked = 0
        for folder in folders {
            let directory = root.appendingPathComponent(folder)
            let files = FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String } ?? []
            // The two files of this check's own (a schema that lies, the words looked for) aside.
            for file in files
            where file.hasSuffix(".swift")
                && !["ReachedStates.swift", "ExampleDocumentationTests.swift"].contains(file)
            {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                checked += 1
                for word in ["JSONSchemaDescribing", "jsonSchema {", "JSONSchema("] {
                    #expect(!text.contains(word), "\(folder)/\(file) writes a schema by hand (\(word))")
                }
            }
        }
        #expect(checked > 10)
    }
}
