import FeedbackJSON
import Foundation
import SessionJournal
import SystemKit
import Testing
import Upstream

@testable import FeedbackService

/// A journal written by version 1 of a system opens under its version 2: every session is read through the
/// migration, equals a fresh version 2 replay of its events, and is journaled again at version 2.
@Suite(.timeLimit(.minutes(5)))
struct SchemaMigrationTests {
    typealias V1 = VersionedCounter.V1
    typealias V2 = VersionedCounter.V2

    @Test func tenThousandVersionOneSessionsOpenUnderVersionTwoEachAsAFreshReplay() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let sessions = JournaledSessions.operations(count: 10_000, maxOperations: 12, seed: 22)
        do {
            let journal = try JournaledSessions.open(directory.path)
            defer { journal.close() }
            // Every fifth revision snapshotted: sessions are read from a version 1 snapshot plus version 1 events.
            try await JournaledSessions.write(
                sessions,
                system: V1(),
                event: V1.Event.init,
                into: journal,
                snapshotInterval: 5
            )
        }
        let journal = try JournaledSessions.open(directory.path)
        let recovered = try journal.recover().sessions
        #expect(recovered.count == sessions.count)
        #expect(recovered.allSatisfy { $0.baseVersion == 1 && $0.events.allSatisfy { $0.stamp.version == 1 } })
        let v2 = HostedSystem(V2())
        // Verified under version 2 before any session is loaded: every one reproduced through the migration.
        let before = try JournalVerifier(systems: [v2]).verify(journal)
        #expect(before.total.migrated == sessions.count, "\(before.lines.prefix(4))")
        #expect(before.total.events > 0)
        let persistence = SessionPersistence(journal: journal, snapshotInterval: 5, logger: JournaledSessions.quiet)
        var broken: [String] = []
        var different: [String] = []
        for session in recovered {
            let number = Int(session.creation.id.dropLast().drop { $0 == "A" })!
            do throws(APIError) {
                let restored = try v2.restoreSession(
                    session,
                    id: SessionID(session.creation.id)!,
                    inboxCapacity: 10,
                    environment: JournaledSessions.environment,
                    persistence: persistence
                )
                var fresh = V2().initialState
                for operation in sessions[number] { V2.reduce(&fresh, V2.Event(operation)) }
                if restored.snapshot().state != V2.encodeState(fresh) { different.append(session.creation.id) }
                restored.passivate()
            } catch {
                broken.append("\(session.creation.id): \(error.message)")
            }
        }
        #expect(broken.isEmpty, "\(broken.prefix(3))")
        #expect(different.isEmpty, "\(different.prefix(3))")
        try await journal.append([])
        journal.close()

        // Loaded once, each session was journaled at version 2: read again, it needs no migration.
        let reopened = try JournaledSessions.open(directory.path)
        defer { reopened.close() }
        let again = try reopened.recover().sessions
        #expect(again.count == sessions.count)
        #expect(again.allSatisfy { $0.baseVersion == 2 && $0.events.isEmpty })
        // And verify, under version 2, finds each of them reproduced through the migration.
        let report = try JournalVerifier(systems: [v2]).verify(reopened)
        #expect(report.total.migrated == sessions.count, "\(report.lines.prefix(4))")
        #expect(report.divergent == 0)
    }

    @Test func aRecordOfANewerVersionIsRefusedWithTheSessionTheVersionAndA503() throws {
        let versions = SchemaVersions(of: V1())
        #expect(throws: SchemaError.self) { try versions.upcast(.object([:]), .state, from: 2) }
        let session = SessionID(JournaledSessions.id(7))!
        do throws(APIError) {
            let _: V1.State = try SessionRestorer.load(
                #"{"total":1}"#,
                .state,
                version: 2,
                versions: versions,
                where: "its state at revision 4",
                session: session,
                system: "counter"
            )
            Issue.record("a newer record was read")
        } catch {
            #expect(error.code == .sessionSchemaNewer)
            #expect(error.status == 503)
            #expect(error.message.contains(session.description))
            #expect(error.message.contains("schema version 2"))
            #expect(error.extra["buildSchemaVersion"] == .int(1))
        }
    }

    @Test func aMigrationThatFailsNamesTheVersionAndThePath() throws {
        let versions = SchemaVersions(of: V2())
        do throws(APIError) {
            let _: V2.State = try SessionRestorer.load(
                #"[1]"#,
                .state,
                version: 1,
                versions: versions,
                where: "its state at revision 0",
                session: SessionID(JournaledSessions.id(8))!,
                system: "counter"
            )
            Issue.record("a state that cannot migrate was read")
        } catch {
            #expect(error.code == .sessionSchemaUnreadable)
            #expect(error.status == 500)
            #expect(error.message.contains("version 1"))
            #expect(error.extra["path"] == .string(""))
        }
        // No migration from version 0 (none exists): said so.
        #expect(throws: SchemaError.self) { try versions.upcast(.object([:]), .event, from: 0) }
        do {
            _ = try SchemaVersions(current: 3, migrations: [VersionedCounter.oneToTwo]).upcast(
                .object([:]),
                .state,
                from: 1
            )
        } catch {
            #expect(error.code == .unreachable)
            #expect(error.message.contains("version 2 to 3"))
        }
    }
}

/// The same over HTTP: a version 1 session read by a version 2 server, and a version 2 session asked of a version 1
/// server, which answers 503 with the session, the versions and where.
@Suite(.timeLimit(.minutes(2)))
struct SchemaVersionHTTPTests {
    @Test func aNewerBuildsSessionIs503WithWordsAndAnOlderOneIsMigrated() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let flags = ["--data-dir", directory.path]
        let v1 = try JournaledServer.start(flags, systems: [HostedSystem(VersionedCounter.V1())])
        let old = try await v1.api.create()
        try await v1.api.post(old, #"{"type":"add","amount":5}"#)
        await v1.stop()

        let v2 = try JournaledServer.start(flags, systems: [HostedSystem(VersionedCounter.V2())])
        let read = try await v2.api.send("GET", "/v1/sessions/\(old)")
        #expect(read.status == 200)
        #expect(read.bodyText.contains(#""state":{"total":5}"#))
        let new = try await v2.api.create()
        try await v2.api.post(new, #"{"type":"add","by":7}"#)
        await v2.stop()

        let back = try JournaledServer.start(flags, systems: [HostedSystem(VersionedCounter.V1())])
        let refused = try await back.api.send("GET", "/v1/sessions/\(new)")
        #expect(refused.status == 503)
        #expect(refused.headers["Retry-After"] != nil)
        let problem = jsonObject(refused.bodyText)
        #expect(problem["type"] as? String == "urn:feedbackhost:problem:session-schema-newer")
        #expect(problem["session"] as? String == new)
        #expect(problem["schemaVersion"] as? Int == 2)
        #expect(problem["buildSchemaVersion"] as? Int == 1)
        #expect((problem["detail"] as? String)?.contains(new) == true)
        await back.stop()
    }
}
