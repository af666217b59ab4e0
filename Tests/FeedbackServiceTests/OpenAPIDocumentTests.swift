import Foundation
import Testing

/// `openapi.yaml` is valid OpenAPI 3.1 and describes routes the binary really serves.
@Suite(.timeLimit(.minutes(1)))
struct OpenAPIDocumentTests {
    private static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("openapi.yaml").path

    /// Runs a Python snippet with the document's path as its argument; returns standard output.
    private func python(_ script: String) throws -> (status: Int32, output: String) {
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["timeout", "60", "python3", "-c", script, Self.document]
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func documentIsValidOpenAPI31() throws {
        let result = try python(
            """
            import sys
            from openapi_spec_validator import validate
            from openapi_spec_validator.readers import read_from_filename
            spec = read_from_filename(sys.argv[1])[0]
            assert spec["openapi"].startswith("3.1"), spec["openapi"]
            validate(spec)
            print("valid")
            """
        )
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("valid"))
    }

    @Test func everyDocumentedOperationIsServed() throws {
        let result = try python(
            """
            import sys, yaml
            spec = yaml.safe_load(open(sys.argv[1]))
            for path, item in spec["paths"].items():
                for method in item:
                    if method in ("get", "post", "put", "delete", "patch", "options"):
                        print(method.upper(), path)
            """
        )
        #expect(result.status == 0, "\(result.output)")
        let operations = result.output.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(operations.count >= 8)
        // With a manual clock, so that its routes (served only then) are served too.
        let server = try RunningServer(arguments: ["--clock", "manual"])
        defer { server.stop() }
        let created = try postJSON("\(server.base)/v1/sessions", #"{"system":"counter"}"#)
        let id = try #require(created.json["id"] as? String)
        // Deletes last, so the other operations still find the session.
        for operation in operations.sorted(by: { $0.first != "DELETE" && $1.first == "DELETE" })
        where operation.count == 2 {
            var (method, path) = (
                operation[0],
                operation[1].replacingOccurrences(of: "{id}", with: id)
                    .replacingOccurrences(of: "{name}", with: "counter")
            )
            // The inspection routes' own parameters: the initial state's revision.
            path = path.replacingOccurrences(of: "{rev}", with: "0")
            if method == "GET", path.hasSuffix("/diff") { path += "?from=0&to=0" }
            var arguments = ["-X", method]
            // A healthy session has no stopped feedbacks to resume and no quarantine to release: 409, served.
            let containment = path.hasSuffix("/resume") || path.hasSuffix("/release")
            if (method == "POST" || method == "PUT") && !containment {
                var body = path.hasSuffix("/events") ? #"{"type":"increment"}"# : #"{"system":"counter"}"#
                if path.hasPrefix("/v1/clock") { body = #"{"milliseconds":0}"# }
                if path.hasSuffix("/forks") { body = #"{"rev":0}"# }
                arguments += ["-H", "Content-Type: application/json", "--data-binary", body]
            }
            // An event stream never ends by itself: its head is the answer, so stop reading after a moment.
            if path.hasSuffix("/stream") { arguments += ["--max-time", "1"] }
            let answer = try curl(arguments + ["\(server.base)\(path)"])
            // A preflight from no allowed origin is refused (403), but served: a path or method not served is 404/405.
            let served =
                method == "OPTIONS"
                ? [204, 403].contains(answer.status)
                : containment ? answer.status == 409 : (200..<300).contains(answer.status)
            #expect(served, "\(method) \(path) answered \(answer.status)")
        }
    }

    /// The document's session id pattern and the server's parser agree on the 22nd character, which carries only
    /// the last 2 bits of the 16 bytes: a PUT is 201 exactly for the ids the pattern accepts, 400 for the others.
    @Test func sessionIDPatternIsTheServers() throws {
        let result = try python(
            """
            import sys, yaml
            spec = yaml.safe_load(open(sys.argv[1]))
            print(spec["components"]["schemas"]["SessionID"]["pattern"])
            """
        )
        let pattern = try Regex(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
        let server = try RunningServer()
        defer { server.stop() }
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var accepted = 0
        for last in alphabet {
            let id = "3q2-7wAAAAAAAAAAAAAAA" + String(last)
            let answer = try curl([
                "-X", "PUT", "-H", "Content-Type: application/json", "--data-binary", #"{"system":"counter"}"#,
                "\(server.base)/v1/sessions/\(id)",
            ])
            let documented = id.wholeMatch(of: pattern) != nil
            if documented { accepted += 1 }
            #expect(answer.status == (documented ? 201 : 400), "PUT \(id) answered \(answer.status)")
        }
        #expect(accepted == 4)
    }
}
