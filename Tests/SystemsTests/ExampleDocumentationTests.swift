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
