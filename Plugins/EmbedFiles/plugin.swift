import Foundation
import PackagePlugin

/// Embeds a target's folder of text files in the binary: at build time `embed-files` writes one Swift file that holds
/// each file's text under its name (`EmbeddedFiles.text(named:)`), so the files are edited, linted and checked as what
/// they are and the server still ships as one executable (no resource bundle to copy into the container).
///
/// The folders, of which a target using the plugin has at least one and excludes it from its sources: `Web/Files`
/// (FeedbackService's web page: `.html`, `.js`, `.css`) and `Schema` (SessionJournalPostgres's PostgreSQL schema:
/// `.sql`, a file a person runs in psql). Names are unique across a target's folders.
@main
struct EmbedFiles: BuildToolPlugin {
    static let folders = ["Web/Files", "Schema"]

    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let manager = FileManager.default
        let folders = Self.folders.filter { folder in
            manager.fileExists(atPath: target.directoryURL.appending(path: folder).path(percentEncoded: false))
        }
        guard !folders.isEmpty else {
            throw PluginError("\(target.name) has none of \(Self.folders.joined(separator: ", ")) to embed")
        }
        var inputs: [URL] = []
        for folder in folders {
            let url = target.directoryURL.appending(path: folder)
            inputs += try manager.contentsOfDirectory(atPath: url.path(percentEncoded: false))
                .filter { !$0.hasPrefix(".") }
                .sorted()
                .map { url.appending(path: $0) }
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedFiles.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) files of \(folders.joined(separator: ", ")) in \(target.name)",
                executable: try context.tool(named: "embed-files").url,
                arguments: [output.path(percentEncoded: false)] + inputs.map { $0.path(percentEncoded: false) },
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }
}

/// Why the plugin cannot embed a target's files.
struct PluginError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
