import Testing

@testable import HTTPServer

@Suite struct ConnectionLifecycleTests {
    private let timeouts = ConnectionLifecycle.Timeouts(header: 100, body: 200, idle: 300, linger: 50)

    @Test func appliesTheHeaderDeadlineFromTheFirstByte() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(now: 1000)
        machine.bytesReceived(now: 1090)
        #expect(machine.tick(now: 1099) == .none)
        #expect(machine.tick(now: 1100) == .close)
    }

    @Test func extendsTheBodyDeadlineWithEachRead() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.bytesReceived(now: 0)
        machine.headParsed(now: 10, hasBody: true, keepAlive: true)
        machine.bytesReceived(now: 150)
        #expect(machine.tick(now: 300) == .none)
        #expect(machine.tick(now: 350) == .close)
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
        #expect(machine.tick(now: 310) == .close)
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
        #expect(machine.tick(now: 55) == .close)
    }

    @Test func answersARequestWhoseClientHalfClosedThenCloses() {
        var machine = ConnectionLifecycle(timeouts: timeouts, now: 0)
        machine.headParsed(now: 0, hasBody: false, keepAlive: true)
        #expect(machine.inputEnded(now: 0) == .none)
        #expect(machine.responseFinished(now: 1, hasBufferedInput: false) == .closeAfterFlush)
    }

    @Test func closesAfterQueuedAnswersOnEOFAndAtOnceWhileStreaming() {
        var idle = ConnectionLifecycle(timeouts: timeouts, now: 0)
        #expect(idle.inputEnded(now: 0) == .closeAfterFlush)
        #expect(!idle.lingers)
        var streaming = ConnectionLifecycle(timeouts: timeouts, now: 0)
        streaming.headParsed(now: 0, hasBody: false, keepAlive: true)
        streaming.streamingStarted()
        #expect(streaming.inputEnded(now: 0) == .close)
    }

    @Test func shutdownClosesIdleEndsStreamsAndLetsRequestsFinish() {
        var idle = ConnectionLifecycle(timeouts: timeouts, now: 0)
        #expect(idle.shutdownRequested() == .close)
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
