import Testing

@testable import SessionJournal
@testable import SessionJournalPostgres

/// How a group commit's records become statements: runs of events as one array call, the rest one each, and which
/// appends the answers refused.
@Suite struct CommitPlanTests {
    private static func event(_ id: String) -> PostgresConnection.Statement {
        .init(name: "event", parameters: [id, "7", "1", "0", "{}", "9", "1", nil, nil])
    }

    @Test func aRunOfEventsIsOneStatementAndOtherRecordsBreakIt() {
        var plan = CommitPlan()
        plan.add(Self.event("a"), of: 0)
        plan.add(Self.event("b"), of: 1)
        plan.add(.init(name: "answer", parameters: ["b"]), of: 1)
        plan.add(Self.event("c"), of: 2)
        plan.add(Self.event("d"), of: 3)
        plan.add(Self.event("e"), of: 3)
        plan.finish()
        #expect(plan.statements.map(\.name) == ["events", "answer", "events"])
        #expect(plan.statements[0].parameters[0] == #"{"a","b"}"#)
        var single = CommitPlan()
        single.add(Self.event("a"), of: 0)
        single.finish()
        #expect(single.statements.map(\.name) == ["event"])
    }

    @Test func refusedPositionsMapBackToTheirAppends() {
        var plan = CommitPlan()
        plan.add(Self.event("a"), of: 0)
        plan.add(Self.event("b"), of: 1)
        plan.add(.init(name: "snapshot", parameters: ["c"]), of: 2)
        plan.add(Self.event("d"), of: 3)
        plan.add(Self.event("e"), of: 4)
        plan.finish()
        func outcome(_ value: String) -> PostgresOutcome { PostgresOutcome(rows: [[value]]) }
        #expect(plan.refused([outcome("{2}"), outcome("f"), outcome("{}")]) == [1, 2])
        #expect(plan.refused([outcome("{}"), outcome("t"), outcome("{1,2}")]) == [3, 4])
    }

    @Test func arrayLiteralsQuoteEveryElementAndEscapeQuotesAndBackslashes() {
        #expect(CommitPlan.array(["a", #"b"c"#, #"d\e"#, nil, "", "{x,y}"]) == #"{"a","b\"c","d\\e",NULL,"","{x,y}"}"#)
        // Characters beyond ASCII pass through as they are (only `"` and `\` are escaped, and they are ASCII).
        #expect(CommitPlan.array(["é\"ü", "日本", "🙂\\", nil]) == #"{"é\"ü","日本","🙂\\",NULL}"#)
    }
}
