import Testing

@testable import HTTPServer

/// The head scanner's eight-bytes-at-a-time tests give the verdict the byte tests give, for every byte value at every
/// position of a word and for random words.
@Suite struct ASCIIWordTests {
    /// The verdict of the byte tests over a word's eight bytes (a tab fails the field-value word test by design).
    private static func byBytes(_ word: UInt64) -> (requestLine: Bool, fieldValue: Bool, target: Bool) {
        var requestLine = true
        var fieldValue = true
        var target = true
        for shift in stride(from: 0, to: 64, by: 8) {
            let b = UInt8(truncatingIfNeeded: word >> UInt64(shift))
            requestLine = requestLine && ASCII.isRequestLine(b)
            fieldValue = fieldValue && ASCII.isFieldValue(b) && b != ASCII.htab
            target = target && ASCII.target[Int(b)]
        }
        return (requestLine, fieldValue, target)
    }

    @Test func everyByteAtEveryPositionOfAnOrdinaryWord() {
        let ordinary = UInt64(0x6162_6364_3A2F_4141)  // "AA/:dcba" in memory, every byte allowed in all three
        #expect(ASCII.allRequestLine(ordinary) && ASCII.allFieldValue(ordinary) && ASCII.allTarget(ordinary))
        for position in 0..<8 {
            for value in 0..<256 {
                let shift = UInt64(position * 8)
                let word = (ordinary & ~(0xFF << shift)) | (UInt64(value) << shift)
                let expected = Self.byBytes(word)
                #expect(ASCII.allRequestLine(word) == expected.requestLine, "byte \(value) at \(position)")
                #expect(ASCII.allFieldValue(word) == expected.fieldValue, "byte \(value) at \(position)")
                #expect(ASCII.allTarget(word) == expected.target, "byte \(value) at \(position)")
            }
        }
    }

    @Test func randomWordsAndWordsOfBorderBytes() {
        var generator = SystemRandomNumberGenerator()
        let borders: [UInt8] = [0x00, 0x08, 0x09, 0x0A, 0x0D, 0x1F, 0x20, 0x21, 0x7E, 0x7F, 0x80, 0xFE, 0xFF]
        for round in 0..<30_000 {
            var word: UInt64 = 0
            for position in 0..<8 {
                let b: UInt8 =
                    switch round % 3 {
                    case 0: borders[Int.random(in: 0..<borders.count, using: &generator)]
                    case 1: UInt8.random(in: 0...255, using: &generator)
                    default: UInt8.random(in: 0x20...0x7E, using: &generator)  // mostly passing words
                    }
                word |= UInt64(b) << UInt64(position * 8)
            }
            if round % 6 == 2 {  // one byte of a passing word replaced by any byte
                let shift = UInt64(Int.random(in: 0..<8, using: &generator) * 8)
                word = (word & ~(0xFF << shift)) | (UInt64(UInt8.random(in: 0...255, using: &generator)) << shift)
            }
            let expected = Self.byBytes(word)
            #expect(ASCII.allRequestLine(word) == expected.requestLine)
            #expect(ASCII.allFieldValue(word) == expected.fieldValue)
            #expect(ASCII.allTarget(word) == expected.target)
        }
    }

    @Test func theFirstCRIsFoundWhereverItLies() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let count = Int.random(in: 1...40, using: &generator)
            // Bytes around CR's value (borrows and near misses), then a CR at the end so that one is always there.
            var bytes = (0..<count).map { _ in
                [UInt8(0x0C), 0x0D, 0x0E, 0x00, 0x8D, 0xFF, 0x41][Int.random(in: 0..<7, using: &generator)]
            }
            bytes.append(ASCII.cr)
            let start = Int.random(in: 0..<bytes.count, using: &generator)
            let expected = bytes[start...].firstIndex(of: ASCII.cr)!
            bytes.withUnsafeBufferPointer { #expect(ASCII.firstCR(in: $0, from: start) == expected) }
        }
    }

    @Test func aValueOfAnyLengthIsJudgedAsItsBytesAre() {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<5_000 {
            let count = Int.random(in: 0...40, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0x20...0x7E, using: &generator) }
            if round % 2 == 1, !bytes.isEmpty {  // one byte anywhere replaced by any byte (a tab, CR, LF, NUL, DEL…)
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            let expected = bytes.allSatisfy(ASCII.isFieldValue)
            bytes.withUnsafeBufferPointer { #expect(ASCII.allFieldValue($0) == expected) }
        }
    }
}
