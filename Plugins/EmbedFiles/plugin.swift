import Foundation
import PackagePlugin

/// Embeds a target's `Web/Files` folder in the binary: at build time `embed-files` writes one Swift file that holds
/// each file's text under its name, so the web page is edited, linted and checked as real `.html`, `.js` and `.css`
/// files and the server still ships as one executable (no resource bundle to copy into the container).
@main
struct EmbedFiles: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let folder = target.directoryURL.appending(path: "Web/Files")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path(percentEncoded: false))
            .filter { !$0.hasPrefix(".") }
            .sorted()
        let inputs = names.map { folder.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedFiles.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(names.count) web files in \(target.name)",
                executable: try context.tool(named: "embed-files").url,
                arguments: [output.path(percentEncoded: false)] + inputs.map { $0.path(percentEncoded: false) },
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }
}
