public import FeedbackJSON
import Foundation

/// Validates JSON instances against JSON Schemas with a validator that is not ours: Python's `jsonschema` (PyPI;
/// `make deps` installs it), draft 2020-12. Each schema is checked as a schema first.
public enum JSONSchemaValidator {
    /// Instances that share one schema.
    public struct Group: Sendable {
        public var label: String
        public var schema: JSONValue
        public var instances: [JSONValue]

        /// `instances` to check against `schema`, named `label` in failures.
        public init(label: String, schema: JSONValue, instances: [JSONValue]) {
            self.label = label
            self.schema = schema
            self.instances = instances
        }
    }

    static let script = """
        import json, sys
        from jsonschema import Draft202012Validator
        failures = []
        for group in json.load(open(sys.argv[1])):
            Draft202012Validator.check_schema(group["schema"])
            validator = Draft202012Validator(group["schema"])
            for instance in group["instances"]:
                for error in validator.iter_errors(instance):
                    failures.append("%s: %s at %s in %s" % (group["label"], error.message,
                        "/" + "/".join(map(str, error.absolute_path)), json.dumps(instance)[:200]))
        print(json.dumps({"checked": sum(len(g["instances"]) for g in json.load(open(sys.argv[1]))),
                          "failures": failures[:20]}))
        """

    /// The failures (none when every instance fits its schema) and how many instances were checked.
    public static func validate(_ groups: [Group]) throws -> (checked: Int, failures: [String]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fh-schemas-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("groups.json")
        let document = JSONValue.array(
            groups.map {
                .object(["label": .string($0.label), "schema": $0.schema, "instances": .array($0.instances)])
            }
        )
        try Data(document.serialized()).write(to: input)
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, input.path]
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let answer = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else {
            return (
                0,
                ["the validator failed (exit \(process.terminationStatus)): \(String(decoding: data, as: UTF8.self))"]
            )
        }
        return (answer["checked"] as? Int ?? 0, answer["failures"] as? [String] ?? [])
    }
}
