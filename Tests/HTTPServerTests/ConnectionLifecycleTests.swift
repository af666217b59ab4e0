import Testing

@testable import HTTPServer

@Suite struct ConnectionLifecycleTests {
    private let timeouts = ConnectionLifecycle.Timeouts(header: 100, body: 200, idle: 300, linger: 50, write: 400)

    @Test func appliesTheHeaderDeadlineFromTheFirstByte() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(now: 1000)
        machine.bytesReceived(now: 1090)
        #expect(machine.tick(now: 1099) == .none)
        #expect(machine.tick(now: 1100) == .close(.clientGone))
    }

    @Test func extendsTheBodyDeadlineWithEachRead() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(now: 0)
        machine.headParsed(now: 10, hasBody: true, keepAlive: true)
        machine.bytesReceived(now: 150)
        #expect(machine.tick(now: 300) == .none)
        #expect(machine.tick(now: 350) == .close(.clientGone))
    }

    @Test func neverTimesOutWhileAHandlerOrAStreamWorks() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(now: 0)
        machine.headParsed(now: 0, hasBody: false, keepAlive: true)
        #expect(machine.tick(now: 10_000) == .none)
        machine.streamingStarted()
        #expect(machine.tick(now: 20_000) == .none)
    }

    @Test func returnsToIdleWithTheIdleDeadlineAfterAKeepAliveResponse() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(now: 0)
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
        machine.bytesReceived(now: 0)
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
        machine.bytesReceived(now: 0)
        #expect(machine.inputEnded() == .none)
        #expect(machine.served(now: 0, blocked: true) == .none)
        #expect(machine.acceptsRequests)
        #expect(machine.served(now: 1, blocked: false) == .closeAfterFlush)
    }

    @Test func shutsTheWriteSideOnceAndLingersUntilEOFAfterAFailedRequest() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(now: 0)
        #expect(machine.requestFailed(now: 0) == .closeAfterFlush)
        #expect(machine.discardsInput)
        #expect(machine.outputFlushed() == .shutdownWrite)
        #expect(machine.writeShut)
        #expect(machine.outputFlushed() == .none)
        #expect(machine.inputEnded() == .close(.clientGone))
    }

    @Test func flushesBeforeClosingWhenEOFArrivesWhileTheAnswerIsStillQueued() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(now: 0)
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
