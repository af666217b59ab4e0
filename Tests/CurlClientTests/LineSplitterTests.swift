import Testing

@testable import CurlClient

struct LineSplitterTests {
    private func lines(_ chunks: [String]) -> [String] {
        var splitter = LineSplitter()
        var result: [String] = []
        for chunk in chunks {
            splitter.append(Array(chunk.utf8))
            while let line = splitter.nextLine() { result.append(String(decoding: line, as: UTF8.self)) }
        }
        splitter.finish()
        while let line = splitter.nextLine() { result.append(String(decoding: line, as: UTF8.self)) }
        return result
    }

    @Test func splitsAtLFAndDropsCR() {
        #expect(lines(["a\r\nb\n\nc"]) == ["a", "b", "", "c"])
    }

    @Test func joinsLinesSplitAcrossChunks() {
        #expect(lines(["da", "ta: 1\r", "\n", "\n", "data: 2\n"]) == ["data: 1", "", "data: 2"])
    }

    @Test func keepsCRInsideALine() {
        #expect(lines(["a\rb\n"]) == ["a\rb"])
    }
}
