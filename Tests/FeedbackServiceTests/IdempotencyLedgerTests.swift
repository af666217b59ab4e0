import Testing

@testable import FeedbackService

struct IdempotencyLedgerTests {
    @Test func sameKeySameBodyReplaysTheFirstAnswer() {
        var ledger = IdempotencyLedger<String>(capacity: 4)
        guard case .proceed = ledger.begin(key: "k", fingerprint: 11) else {
            Issue.record("a new key proceeds")
            return
        }
        ledger.complete(key: "k", answer: "first")
        guard case .replay(let answer) = ledger.begin(key: "k", fingerprint: 11) else {
            Issue.record("a repeated key replays")
            return
        }
        #expect(answer == "first")
    }

    @Test func sameKeyOtherBodyIsAMismatch() {
        var ledger = IdempotencyLedger<String>(capacity: 4)
        _ = ledger.begin(key: "k", fingerprint: 1)
        ledger.complete(key: "k", answer: "first")
        guard case .mismatch = ledger.begin(key: "k", fingerprint: 2) else {
            Issue.record("another body is a mismatch")
            return
        }
    }

    /// An answer an earlier build journaled (its fingerprint of another hash, rewritten to 0 by the journal) is
    /// answered again to any body with its key: the retry it was kept for still gets it.
    @Test func anUnknownFingerprintMatchesAnyBody() {
        var ledger = IdempotencyLedger<String>(capacity: 4)
        ledger.remember(key: "k", fingerprint: 0, answer: "kept")
        guard case .replay(let answer) = ledger.begin(key: "k", fingerprint: 0x5338_dbd8_614c_34b0) else {
            Issue.record("a kept answer of unknown fingerprint replays")
            return
        }
        #expect(answer == "kept")
    }

    @Test func keyStillInFlightIsReported() {
        var ledger = IdempotencyLedger<String>(capacity: 4)
        _ = ledger.begin(key: "k", fingerprint: 1)
        guard case .inFlight = ledger.begin(key: "k", fingerprint: 1) else {
            Issue.record("in flight")
            return
        }
        ledger.abandon(key: "k")
        guard case .proceed = ledger.begin(key: "k", fingerprint: 1) else {
            Issue.record("an abandoned key may proceed again")
            return
        }
    }

    @Test func oldestKeysAreForgottenPastCapacity() {
        var ledger = IdempotencyLedger<Int>(capacity: 3)
        for index in 0..<10 {
            _ = ledger.begin(key: "k\(index)", fingerprint: UInt64(index))
            ledger.complete(key: "k\(index)", answer: index)
            #expect(ledger.count <= 3)
        }
        guard case .replay(9) = ledger.begin(key: "k9", fingerprint: 9) else {
            Issue.record("the newest key is remembered")
            return
        }
        guard case .proceed = ledger.begin(key: "k0", fingerprint: 0) else {
            Issue.record("the oldest key is forgotten")
            return
        }
    }

    @Test func rememberedAnswersReplayAndKeepTheNewestWithinCapacity() {
        var ledger = IdempotencyLedger<Int>(capacity: 2)
        for index in 0..<3 {
            ledger.remember(key: "k\(index)", fingerprint: UInt64(index), answer: index * 10)
        }
        #expect(ledger.count == 2)
        guard case .replay(20) = ledger.begin(key: "k2", fingerprint: 2) else {
            Issue.record("a remembered answer replays")
            return
        }
        guard case .mismatch = ledger.begin(key: "k1", fingerprint: 9) else {
            Issue.record("a remembered key with another body is a mismatch")
            return
        }
        guard case .proceed = ledger.begin(key: "k0", fingerprint: 0) else {
            Issue.record("the oldest remembered key is forgotten")
            return
        }
    }
}
