package import FeedbackJSON
import Foundation
import SessionJournal
package import SessionRuntime

/// The list of sessions (issue 32): the sessions in memory first (most recently used first), then the ones the
/// journal holds (by the time they last left memory, newest first), with their status, and counts by system and status.
///
/// Concurrency: runs on the calling thread; the journal's reads wait for their turn on its queue.
extension SessionHost {
    /// What a list asks for.
    package struct ListQuery: Sendable {
        /// Only sessions of this system.
        package var system: String?
        /// Only sessions of this status: active, passive or broken.
        package var status: String?
        /// Where the previous page ended (its `next`).
        package var cursor: String?
        /// At most this many sessions.
        package var limit: Int
        /// Only the sessions this says yes to (a token's cover), by id and system.
        package var covers: @Sendable (SessionID, String) -> Bool
        /// Whether counts are given (a token that covers whole systems, or no token).
        package var counted: Bool

        package init(
            system: String?,
            status: String?,
            cursor: String?,
            limit: Int,
            covers: @escaping @Sendable (SessionID, String) -> Bool,
            counted: Bool
        ) {
            self.system = system
            self.status = status
            self.cursor = cursor
            self.limit = limit
            self.covers = covers
            self.counted = counted
        }
    }

    /// `{"sessions":[{"id","system","rev","created","lastActivity","status"}],"next","counts"}`, `limit` sessions a
    /// page (those in memory, then the journal's, on the same page) but the last: times in milliseconds
    /// since 1970 (`created` null for a session in memory of a server without a journal), `next` the cursor of the
    /// following page (null after the last), `counts` by system and status (absent for a token of some sessions).
    package func listSessions(_ query: ListQuery) throws(APIError) -> JSONValue {
        let limit = max(1, min(query.limit, 1000))
        let broken = Set(persistence?.brokenIDs ?? [])
        var entries: [JSONValue] = []
        var next: JSONValue = .null
        // The phases: "a:N" (the Nth session in memory on), "j:TIME:ID" (the journal after that), "b:N" (broken).
        var cursor = query.cursor ?? (query.status == "broken" ? "b:0" : query.status == "passive" ? "j" : "a:0")
        let wallNow = Date().timeIntervalSince1970 * 1000
        let uptimeNow = DispatchTime.now().uptimeNanoseconds
        func wanted(_ id: SessionID, _ system: String, _ status: String) -> Bool {
            (query.system == nil || query.system == system) && (query.status == nil || query.status == status)
                && query.covers(id, system)
        }
        if cursor.hasPrefix("a:") {
            let skip = Int(cursor.dropFirst(2)) ?? 0
            let active = store.all.filter { wanted($0.id, $0.systemName, "active") }
                .sorted { ($0.lastActive, $1.id.description) > ($1.lastActive, $0.id.description) }
            for session in active.dropFirst(skip).prefix(limit) {
                let idle = Double(uptimeNow &- min(session.lastActive, uptimeNow)) / 1_000_000
                entries.append(
                    Self.entry(
                        id: session.id.description,
                        system: session.systemName,
                        revision: session.snapshot().cursor.rev,
                        created: nil,
                        lastActivity: wallNow - idle,
                        status: "active"
                    )
                )
            }
            if active.count > skip + limit {
                next = .string("a:\(skip + limit)")
            } else if query.status == nil, persistence != nil {
                // The page goes on with the journal's sessions: a page is short only at the list's end (with no
                // session in memory, the first page would otherwise be empty, `next` pointing at all of them).
                if entries.count < limit { cursor = "j" } else { next = .string("j") }
            }
        }
        if cursor.hasPrefix("j"), let persistence {
            var after: SessionListCursor?
            let parts = cursor.split(separator: ":", maxSplits: 2).map(String.init)
            if parts.count == 3, let time = Int64(parts[1]) { after = SessionListCursor(time: time, id: parts[2]) }
            // Reads a page at a time until the page holds `limit` sessions (with those in memory before them) or the
            // journal ends.
            var scanned = 0
            while entries.count < limit, scanned < 100_000 {
                let page: [JournaledSession]
                do {
                    page = try persistence.journal.listSessions(system: query.system, after: after, limit: limit)
                } catch {
                    throw SessionPersistence.notRead(error)
                }
                scanned += page.count
                for journaled in page {
                    after = SessionListCursor(time: journaled.leftAt, id: journaled.id)
                    guard let id = SessionID(journaled.id), store[id] == nil else { continue }
                    let status = broken.contains(id) ? "broken" : "passive"
                    guard wanted(id, journaled.system, status) else { continue }
                    entries.append(
                        Self.entry(
                            id: journaled.id,
                            system: journaled.system,
                            revision: journaled.snapshotRevision,
                            created: journaled.createdAt * 1000,
                            lastActivity: journaled.leftAt > 0 ? Double(journaled.leftAt) : nil,
                            status: status
                        )
                    )
                    if entries.count == limit { break }
                }
                if page.count < limit { after = nil }
                if after == nil || entries.count == limit { break }
            }
            if let after, entries.count == limit { next = .string("j:\(after.time):\(after.id)") }
        } else if cursor.hasPrefix("b:") {
            let skip = Int(cursor.dropFirst(2)) ?? 0
            let ids = broken.map(\.description).sorted()
            for text in ids.dropFirst(skip).prefix(limit) {
                guard let id = SessionID(text) else { continue }
                entries.append(
                    Self.entry(id: text, system: "", revision: 0, created: nil, lastActivity: nil, status: "broken")
                )
                _ = id
            }
            if ids.count > skip + limit { next = .string("b:\(skip + limit)") }
        }
        var answer: [String: JSONValue] = ["sessions": .array(entries), "next": next]
        if query.counted { answer["counts"] = try counts(query.system, broken: broken) }
        return .object(answer)
    }

    /// `{"total":{...},"systems":{"NAME":{"active","passive","broken","total"}}}`.
    private func counts(_ system: String?, broken: Set<SessionID>) throws(APIError) -> JSONValue {
        var totals: [String: Int] = [:]
        if let persistence {
            do {
                totals = try persistence.journal.sessionCounts()
            } catch {
                throw SessionPersistence.notRead(error)
            }
        }
        var active: [String: Int] = [:]
        for session in store.all { active[session.systemName, default: 0] += 1 }
        if persistence == nil { totals = active }
        var systems: [String: JSONValue] = [:]
        var sum = (active: 0, passive: 0, broken: 0, total: 0)
        for (name, total) in totals where system == nil || system == name {
            let inMemory = active[name] ?? 0
            let brokenHere = 0  // a broken session's system is not known without reading it: counted as passive
            let passive = max(0, total - inMemory - brokenHere)
            systems[name] = .object([
                "active": .int(Int64(inMemory)), "passive": .int(Int64(passive)),
                "broken": .int(Int64(brokenHere)), "total": .int(Int64(total)),
            ])
            sum.active += inMemory
            sum.passive += passive
            sum.total += total
        }
        sum.broken = system == nil ? broken.count : 0
        return .object([
            "systems": .object(systems),
            "total": .object([
                "active": .int(Int64(sum.active)), "passive": .int(Int64(sum.passive)),
                "broken": .int(Int64(sum.broken)), "total": .int(Int64(sum.total)),
            ]),
        ])
    }

    private static func entry(
        id: String,
        system: String,
        revision: UInt64,
        created: Double?,
        lastActivity: Double?,
        status: String
    ) -> JSONValue {
        .object([
            "id": .string(id),
            "system": .string(system),
            "rev": .int(Int64(revision)),
            "created": created.map { .int(Int64($0.rounded())) } ?? .null,
            "lastActivity": lastActivity.map { .int(Int64($0.rounded())) } ?? .null,
            "status": .string(status),
        ])
    }
}
