import Testing
import Upstream

@testable import CurlClient

struct TransferStateMachineTests {
    private func feed(_ machine: inout TransferStateMachine, _ lines: [String]) -> [TransferStateMachine.HeadAction] {
        lines.map { line in
            Array(line.utf8).withUnsafeBytes {
                machine.receivedHeaderLine($0, url: "http://u/", followsRedirects: true)
            }
        }
    }

    private func body(_ machine: inout TransferStateMachine, _ text: String) -> TransferStateMachine.BodyAction {
        Array(text.utf8).withUnsafeBytes { machine.receivedBody($0) }
    }

    @Test func bufferedFetchKeepsTheLastHeadBlockAndTheBody() {
        var machine = TransferStateMachine(mode: .buffered(maxBodyBytes: 10))
        _ = feed(&machine, ["HTTP/1.1 302 Found\r\n", "Location: /b\r\n", "\r\n"])
        _ = feed(&machine, ["HTTP/1.1 200 OK\r\n", "X-A:  1 \r\n", "\r\n"])
        #expect(body(&machine, "hello") == .accept)
        guard case .finishFetch(.success(let response)) = machine.completed(error: nil, status: 200, url: "http://u/b")
        else {
            Issue.record("expected a response")
            return
        }
        #expect(response.status == 200)
        #expect(response.headers["x-a"] == "1")
        #expect(response.headers["location"] == nil)
        #expect(response.bodyText == "hello")
        #expect(response.url == "http://u/b")
    }

    @Test func bufferedBodyOverTheCapAbortsAndFailsAsTooLarge() {
        var machine = TransferStateMachine(mode: .buffered(maxBodyBytes: 4))
        #expect(body(&machine, "abc") == .accept)
        #expect(body(&machine, "de") == .abort)
        let writeError = UpstreamError(.other, "write error")
        guard case .finishFetch(.failure(let error)) = machine.completed(error: writeError, status: 200, url: "u")
        else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .tooLarge)
    }

    @Test func streamDeliversTheHeadOnceTheFinalBlockEnds() {
        var machine = TransferStateMachine(mode: .streaming(bufferBytes: 8))
        #expect(feed(&machine, ["HTTP/1.1 100 Continue\r\n", "\r\n"]) == [.none, .none])
        #expect(feed(&machine, ["HTTP/1.1 301 Moved\r\n", "Location: /x\r\n", "\r\n"]) == [.none, .none, .none])
        let actions = feed(&machine, ["HTTP/1.1 200 OK\r\n", "Content-Type: text/plain\r\n", "\r\n"])
        let head = UpstreamHead(status: 200, headers: ["Content-Type": "text/plain"], url: "http://u/")
        #expect(actions == [.none, .none, .deliverHead(head)])
    }

    @Test func streamPausesWhenTheReaderFallsBehindAndResumesWhenItCatchesUp() {
        var machine = TransferStateMachine(mode: .streaming(bufferBytes: 8))
        _ = feed(&machine, ["HTTP/1.1 200 OK\r\n", "\r\n"])
        #expect(body(&machine, "aaaa") == .accept)
        #expect(body(&machine, "bbbb") == .accept)
        #expect(body(&machine, "cccc") == .pause)
        #expect(machine.isPaused)
        #expect(machine.readerWantsChunk() == .deliver(Array("aaaa".utf8), unpause: true))
        #expect(!machine.isPaused)
        #expect(body(&machine, "cccc") == .accept)
        #expect(machine.readerWantsChunk() == .deliver(Array("bbbb".utf8), unpause: false))
        #expect(machine.readerWantsChunk() == .deliver(Array("cccc".utf8), unpause: false))
        #expect(machine.readerWantsChunk() == .wait(unpause: false))
        #expect(body(&machine, "dd") == .acceptAndDeliver(Array("dd".utf8)))
    }

    @Test func streamEndIsDeliveredAfterBufferedChunksAndOnlyOnce() {
        var machine = TransferStateMachine(mode: .streaming(bufferBytes: 8))
        _ = feed(&machine, ["HTTP/1.1 200 OK\r\n", "\r\n"])
        #expect(body(&machine, "tail") == .accept)
        let failure = UpstreamError(.timedOut, "slow")
        #expect(machine.completed(error: failure, status: 200, url: "u") == .none)
        #expect(machine.readerWantsChunk() == .deliver(Array("tail".utf8), unpause: false))
        #expect(machine.readerWantsChunk() == .finish(failure))
        #expect(machine.readerWantsChunk() == .finish(nil))
    }

    @Test func streamCompletionWakesAWaitingReader() {
        var machine = TransferStateMachine(mode: .streaming(bufferBytes: 8))
        _ = feed(&machine, ["HTTP/1.1 200 OK\r\n", "\r\n"])
        #expect(machine.readerWantsChunk() == .wait(unpause: false))
        #expect(machine.completed(error: nil, status: 200, url: "u") == .finishReader(nil))
    }

    @Test func streamFailingBeforeItsHeadFailsTheStreamCall() {
        var machine = TransferStateMachine(mode: .streaming(bufferBytes: 8))
        let failure = UpstreamError(.couldNotConnect, "refused")
        #expect(machine.completed(error: failure, status: 0, url: "u") == .failHead(failure))
        #expect(body(&machine, "late") == .abort)
    }
}
