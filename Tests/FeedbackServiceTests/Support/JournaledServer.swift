import FeedbackService
import Foundation
import Upstream

/// The service built by `ServiceApplication.build` in the test process with the given systems and flags (a data
/// directory among them), on 127.0.0.1:0.
struct JournaledServer {
    let application: FeedbackService.ServiceApplication
    let api: SessionAPIClient

    static func start(_ flags: [String], systems: [HostedSystem]) throws -> JournaledServer {
        let reader = ServiceApplication.defaultReader(
            arguments: ["feedback-host", "--host", "127.0.0.1", "--port", "0", "--stream-drain-ms", "100"] + flags,
            environment: [:]
        )
        let application = try ServiceApplication.build(
            reader: reader,
            systems: systems,
            logger: JournaledSessions.quiet
        )
        return JournaledServer(application: application, api: SessionAPIClient(port: try application.start()))
    }

    /// `/readyz`'s status once it is no longer `verifying` (bounded by the suite's time limit), and its body.
    func readinessAfterVerification() async throws -> (Int, String) {
        while true {
            let answer = try await api.send("GET", "/readyz")
            if !answer.bodyText.contains("problem:verifying") { return (answer.status, answer.bodyText) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func stop() async {
        await api.shutdown()
        await application.shutdown(deadline: .seconds(2))
    }
}
