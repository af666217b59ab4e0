import Testing

@testable import FeedbackJSON

/// `[UInt8](writing:spare:_:)` keeps what was written in its scratch room, with the spare room asked for.
@Suite struct ArrayWritingTests {
    @Test(arguments: [0, 1, 7, 64, 5000])
    func bytesWrittenInScratchRoomAreKeptWithTheirSpareRoom(count: Int) {
        let bytes = [UInt8](writing: count + 3, spare: 100) { out in
            for index in 0..<count { out[index] = UInt8(truncatingIfNeeded: index) }
            return count
        }
        #expect(bytes == (0..<count).map { UInt8(truncatingIfNeeded: $0) })
        #expect(bytes.capacity >= count + 3 + 100)
    }
}
