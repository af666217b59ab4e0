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
        let server = try RunningServer()
        defer { server.stop() }
        let created = try postJSON("\(server.base)/v1/sessions", #"{"system":"counter"}"#)
        let id = try #require(created.json["id"] as? String)
        // Deletes last, so the other operations still find the session.
        for operation in operations.sorted(by: { $0.first != "DELETE" && $1.first == "DELETE" })
        where operation.count == 2 {
            let (method, path) = (operation[0], operation[1].replacingOccurrences(of: "{id}", with: id))
            var arguments = ["-X", method]
            if method == "POST" || method == "PUT" {
                let body = path.hasSuffix("/events") ? #"{"type":"increment"}"# : #"{"system":"counter"}"#
                arguments += ["-H", "Content-Type: application/json", "--data-binary", body]
            }
            // An event stream never ends by itself: its head is the answer, so stop reading after a moment.
            if path.hasSuffix("/stream") { arguments += ["--max-time", "1"] }
            let answer = try curl(arguments + ["\(server.base)\(path)"])
            #expect((200..<300).contains(answer.status), "\(method) \(path) answered \(answer.status)")
        }
    }
}
