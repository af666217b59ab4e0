import Foundation
import Testing

/// A journal written by the build before `@FeedbackEvent` replaced the hand-written event coding (Fixtures/
/// JournalBeforeMacros: a counter, a catch game, a traffic light and a paging search, with the effects' events
/// `schedule`, `throwToHuman`, `advance` and `pageLoaded`, run under `--clock manual`) restores in this build to the
/// states that build answered, and its sessions go on.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct JournalBeforeMacrosTests {
    @Test func sessionsJournaledBeforeTheMacrosRestoreToTheSameStates() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/JournalBeforeMacros")
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        for file in ["journal.sqlite", "clock.json"] {
            try FileManager.default.copyItem(
                at: fixture.appendingPathComponent(file),
                to: URL(fileURLWithPath: directory.path).appendingPathComponent(file)
            )
        }
        let expected = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: fixture.appendingPathComponent("expected.json")))
                as? [String: [String: Any]]
        )
        #expect(expected.count == 4)
        let server = try RunningServer(arguments: ["--data-dir", directory.path, "--clock", "manual"])
        defer { server.stop() }
        for (system, session) in expected.sorted(by: { $0.key < $1.key }) {
            let id = try #require(session["id"] as? String)
            let restored = try curl(["\(server.base)/v1/sessions/\(id)"])
            #expect(restored.status == 200, "\(system): \(restored.body)")
            let state = try #require(restored.json["state"] as? NSDictionary, "\(system)")
            #expect(state == (session["state"] as? NSDictionary), "\(system): \(restored.body)")
        }
        let counter = try #require(expected["counter"]?["id"] as? String)
        let next = try postJSON("\(server.base)/v1/sessions/\(counter)/events", #"{"type":"add","amount":4}"#)
        #expect(next.status == 200)
        #expect((next.json["state"] as? [String: Any])?["count"] as? Int == 7)
    }
}
