import Testing

@testable import FeedbackService

/// The budget's arithmetic without a server: weighing, admitting, settling, closing, and the ledger's weight.
@Suite
struct SessionAccountTests {
    @Test func aStateWeighsTwiceItsEncodingPlusItsMembersAndElements() {
        let weight = SessionBudget.weigh(Array(#"{"a":[1,2,3],"b":"x"}"#.utf8))
        #expect(weight.encoded == 21)
        #expect(weight.held == 2 * 21 + 96 * 2 + 24 * 3)
    }

    @Test func anAccountTakesItsSessionAndGivesEverythingBackOnce() throws {
        let budget = SessionBudget(limit: 100_000, stateLimit: 10_000)
        let state = SessionBudget.weigh(Array(#"{"count":0}"#.utf8))
        let account = try SessionAccount.open(in: budget, state: state)
        #expect(budget.bytes == SessionBudget.sessionOverheadBytes + state.held)
        account.settleAnswers(500)
        #expect(budget.bytes == account.bytes)
        account.close()
        account.close()
        #expect(budget.bytes == 0)
        // A closed account counts nothing more.
        account.settleState(SessionBudget.Weight(encoded: 10, held: 20))
        #expect(budget.bytes == 0)
    }

    @Test func growthPastTheBudgetOrAStatePastTheLimitIsRefusedWithNothingTaken() throws {
        let budget = SessionBudget(limit: 10_000, stateLimit: 3_000)
        let account = try SessionAccount.open(in: budget, state: .zero)
        let before = budget.bytes
        let tooLarge = account.admitState(SessionBudget.Weight(encoded: 3_001, held: 6_002))
        if case .failure(let error) = tooLarge { #expect(error.code == .stateTooLarge && error.status == 422) }
        #expect((try? tooLarge.get()) == nil)
        let tooMuch = account.admitState(SessionBudget.Weight(encoded: 2_000, held: 9_000))
        if case .failure(let error) = tooMuch { #expect(error.code == .sessionsMemoryFull && error.status == 507) }
        #expect(budget.bytes == before)
        // What fits is taken; undone when its events were not queued after all.
        let fits = SessionBudget.Weight(encoded: 1_000, held: 2_000)
        let previous = try account.admitState(fits).get()
        #expect(budget.bytes == before + 2_000)
        account.revertState(from: fits, to: previous)
        #expect(budget.bytes == before)
        account.close()
    }

    @Test func aNewSessionPastTheBudgetOrTheLimitIsRefused() {
        let budget = SessionBudget(limit: 4_096, stateLimit: 1_000)
        #expect(throws: APIError.self) {
            try SessionAccount.open(in: budget, state: SessionBudget.Weight(encoded: 1_001, held: 2_002))
        }
        #expect(throws: APIError.self) {
            try SessionAccount.open(in: budget, state: SessionBudget.Weight(encoded: 1_000, held: 4_000))
        }
        #expect(budget.bytes == 0)
        // Restored sessions are counted whatever the budget says.
        let restored = SessionAccount.restored(in: budget, state: SessionBudget.Weight(encoded: 1_000, held: 4_000))
        #expect(budget.bytes > budget.limit)
        restored.close()
        #expect(budget.bytes == 0)
    }

    private static func proceeds(_ decision: IdempotencyLedger<[UInt8]>.Decision) -> Bool {
        if case .proceed = decision { return true }
        return false
    }

    @Test func theLedgerWeighsTheAnswersItKeeps() {
        var ledger = IdempotencyLedger<[UInt8]>(capacity: 2, weigh: { $0.count })
        #expect(Self.proceeds(ledger.begin(key: "a", fingerprint: 1)))
        #expect(ledger.weight == 0)
        ledger.complete(key: "a", answer: [1, 2, 3])
        #expect(ledger.weight == 3)
        ledger.remember(key: "b", fingerprint: 2, answer: [1, 2, 3, 4, 5])
        #expect(ledger.weight == 8)
        // A third key forgets the oldest.
        ledger.remember(key: "c", fingerprint: 3, answer: [1])
        #expect(ledger.weight == 6)
        #expect(Self.proceeds(ledger.begin(key: "d", fingerprint: 4)))
        ledger.abandon(key: "d")
        #expect(ledger.weight == 1)
    }
}
