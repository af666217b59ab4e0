import Testing

@testable import HTTPServer

@Suite struct ConnectionLifecycleTests {
    private let timeouts = ConnectionLifecycle.Timeouts(header: 100, body: 200, idle: 300, linger: 50, write: 400)

    @Test func appliesTheHeaderDeadlineFromTheFirstByte() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(1, now: 1000)
        machine.bytesReceived(1, now: 1090)
        #expect(machine.tick(now: 1099) == .none)
        #expect(machine.tick(now: 1100) == .close(.clientGone))
    }

    @Test func answersABodyPastItsTotalDeadline408HoweverItTrickles() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(1, now: 0)
        machine.headParsed(now: 10, hasBody: true, keepAlive: true)
        // A byte now and then does not move the deadline: it counts from the end of the head.
        for now in stride(from: UInt64(20), to: 210, by: 10) {
            machine.bytesReceived(1, now: now)
            #expect(machine.tick(now: now) == .none)
        }
        #expect(machine.tick(now: 210) == .timeOut)
        #expect(machine.phase == .closing)
        #expect(machine.lingers)
        #expect(machine.discardsInput)
        // The answer goes out, the write side is shut, and the client has the linger time to read it.
        #expect(machine.outputFlushed() == .shutdownWrite)
        #expect(machine.tick(now: 259) == .none)
        #expect(machine.tick(now: 260) == .close(.clientGone))
    }

    private let rated = ConnectionLifecycle.Timeouts(
        header: 100,
        body: 1_000_000_000_000,
        idle: 300,
        linger: 50,
        write: 400,
        minBodyRate: 1000,
        bodyGrace: 2_000_000_000
    )

    @Test func answersABodyBelowTheMinimumRate408OnceTheGracePeriodIsOver() {
        var machine = ConnectionLifecycle(timeouts: rated, now: 0)
        machine.bytesReceived(100, now: 0)
        machine.headParsed(now: 0, hasBody: true, keepAlive: true, bufferedBytes: 10)
        // Within the grace period any rate will do.
        machine.bytesReceived(1, now: 1_000_000_000)
        #expect(machine.tick(now: 1_999_999_999) == .none)
        // 11 bytes in 2 s is far below 1000 bytes/s.
        #expect(machine.tick(now: 2_000_000_000) == .timeOut)
    }

    @Test func keepsABodyThatAveragesTheMinimumRate() {
        var machine = ConnectionLifecycle(timeouts: rated, now: 0)
        machine.headParsed(now: 0, hasBody: true, keepAlive: true, bufferedBytes: 1000)
        for second in UInt64(1)...10 {
            machine.bytesReceived(1000, now: second * 1_000_000_000)
            #expect(machine.tick(now: second * 1_000_000_000) == .none)
        }
        // The average falls below the rate once the client stalls long enough.
        #expect(machine.tick(now: 11_000_000_000) == .none)
        #expect(machine.tick(now: 11_000_000_001) == .timeOut)
        machine.bodyCompleted()
    }

    @Test func checksNoRateWhenTheMinimumIsZeroAndStopsCheckingOnceTheBodyIsIn() {
        var unrated = rated
        unrated.minBodyRate = 0
        var machine = ConnectionLifecycle(timeouts: unrated, now: 0)
        machine.headParsed(now: 0, hasBody: true, keepAlive: true)
        #expect(machine.tick(now: 100_000_000_000) == .none)
        var done = ConnectionLifecycle(timeouts: rated, now: 0)
        done.headParsed(now: 0, hasBody: true, keepAlive: true, bufferedBytes: 1)
        done.bodyCompleted()
        #expect(done.tick(now: 100_000_000_000) == .none)
    }

    @Test func lingersAtMostASecondAfterA408() {
        var long = timeouts
        long.linger = 5_000_000_000
        var machine = ConnectionLifecycle(timeouts: long, now: 0)
        machine.headParsed(now: 0, hasBody: true, keepAlive: true)
        #expect(machine.tick(now: 200) == .timeOut)
        #expect(machine.outputFlushed() == .shutdownWrite)
        machine.bytesReceived(1, now: 500_000_000)  // still dripping: discarded, and the deadline does not move
        #expect(machine.tick(now: 1_000_000_199) == .none)
        #expect(machine.tick(now: 1_000_000_200) == .close(.clientGone))
    }

    @Test func aNewBodyStartsItsOwnDeadlineAndCount() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.headParsed(now: 0, hasBody: true, keepAlive: true, bufferedBytes: 5)
        machine.bodyCompleted()
        #expect(machine.responseFinished(now: 150, hasBufferedInput: true) == .none)
        machine.headParsed(now: 160, hasBody: true, keepAlive: true)
        #expect(machine.bodyBytes == 0)
        #expect(machine.tick(now: 359) == .none)
        #expect(machine.tick(now: 360) == .timeOut)
    }

    @Test func neverTimesOutWhileAHandlerOrAStreamWorks() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(1, now: 0)
        machine.headParsed(now: 0, hasBody: false, keepAlive: true)
        #expect(machine.tick(now: 10_000) == .none)
        machine.streamingStarted()
        #expect(machine.tick(now: 20_000) == .none)
    }

    @Test func returnsToIdleWithTheIdleDeadlineAfterAKeepAliveResponse() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(1, now: 0)
        machine.headParsed(now: 0, hasBody: false, keepAlive: true)
        #expect(machine.responseFinished(now: 10, hasBufferedInput: false) == .none)
        #expect(machine.phase == .idle)
        #expect(machine.tick(now: 309) == .none)
        #expect(machine.tick(now: 310) == .close(.clientGone))
    }

    @Test func closesAfterTheResponseWhenTheRequestSaidClose() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.headParsed(now: 0, hasBody: false, keepAlive: false)
        #expect(machine.responseFinished(now: 0, hasBufferedInput: false) == .closeAfterFlush)
        #expect(machine.phase == .closing)
        #expect(!machine.lingers)
    }

    @Test func lingersAfterAFailedRequest() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(1, now: 0)
        #expect(machine.requestFailed(now: 5) == .closeAfterFlush)
        #expect(machine.lingers)
        #expect(machine.tick(now: 54) == .none)
        #expect(machine.tick(now: 55) == .close(.clientGone))
    }

    @Test func answersARequestWhoseClientHalfClosedThenCloses() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.headParsed(now: 0, hasBody: false, keepAlive: true)
        #expect(machine.inputEnded() == .none)
        #expect(machine.served(now: 0, blocked: false) == .none)
        #expect(machine.responseFinished(now: 1, hasBufferedInput: false) == .closeAfterFlush)
        #expect(machine.outputFlushed() == .close(.clientGone))
    }

    @Test func closesAfterQueuedAnswersOnEOFAndAtOnceWhileStreaming() {
        var idle = ConnectionLifecycle(timeouts: timeouts, now: 0)
        #expect(idle.inputEnded() == .none)
        #expect(idle.served(now: 0, blocked: false) == .closeAfterFlush)
        #expect(!idle.lingers)
        #expect(idle.outputFlushed() == .close(.clientGone))
        var streaming = ConnectionLifecycle(timeouts: timeouts, now: 0)
        streaming.headParsed(now: 0, hasBody: false, keepAlive: true)
        streaming.streamingStarted()
        #expect(streaming.inputEnded() == .none)
        #expect(streaming.served(now: 0, blocked: false) == .close(.clientGone))
    }

    @Test func waitsWithEOFWhileBufferedRequestsWaitForTheClientToRead() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(1, now: 0)
        #expect(machine.inputEnded() == .none)
        #expect(machine.served(now: 0, blocked: true) == .none)
        #expect(machine.acceptsRequests)
        #expect(machine.served(now: 1, blocked: false) == .closeAfterFlush)
    }

    @Test func shutsTheWriteSideOnceAndLingersUntilEOFAfterAFailedRequest() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(1, now: 0)
        #expect(machine.requestFailed(now: 0) == .closeAfterFlush)
        #expect(machine.discardsInput)
        #expect(machine.outputFlushed() == .shutdownWrite)
        #expect(machine.writeShut)
        #expect(machine.outputFlushed() == .none)
        #expect(machine.inputEnded() == .close(.clientGone))
    }

    @Test func flushesBeforeClosingWhenEOFArrivesWhileTheAnswerIsStillQueued() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(1, now: 0)
        _ = machine.requestFailed(now: 0)
        #expect(machine.inputEnded() == .closeAfterFlush)
        #expect(machine.outputFlushed() == .close(.clientGone))
    }

    @Test func closesAClientThatStopsReadingAtTheWriteDeadline() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.headParsed(now: 0, hasBody: false, keepAlive: true)
        machine.streamingStarted()
        machine.outputBlocked(now: 10)
        machine.outputBlocked(now: 300)  // still blocked: the deadline runs from the first time
        #expect(machine.tick(now: 409) == .none)
        #expect(machine.tick(now: 410) == .close(.writeStalled))
        machine.outputSent(now: 405)
        #expect(machine.tick(now: 410) == .none)
        #expect(machine.outputFlushed() == .none)
        #expect(machine.tick(now: 10_000) == .none)
    }

    @Test func shutdownClosesIdleEndsStreamsAndLetsRequestsFinish() {
        var idle = ConnectionLifecycle(timeouts: timeouts, now: 0)
        #expect(idle.shutdownRequested() == .close(.serverShutdown))
        var streaming = ConnectionLifecycle(timeouts: timeouts, now: 0)
        streaming.headParsed(now: 0, hasBody: false, keepAlive: true)
        streaming.streamingStarted()
        #expect(streaming.shutdownRequested() == .endStream)
        var busy = ConnectionLifecycle(timeouts: timeouts, now: 0)
        busy.headParsed(now: 0, hasBody: false, keepAlive: true)
        #expect(busy.shutdownRequested() == .none)
        #expect(busy.responseFinished(now: 0, hasBufferedInput: false) == .closeAfterFlush)
    }
}
