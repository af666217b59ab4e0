import CZlib
import Foundation
import Testing

@testable import HTTPServer

/// A minimal streaming inflater (zlib, windowBits 15 + 32: gzip or zlib header detected), used to
/// check the encoder's output independently of it.
private final class Inflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private(set) var reachedEnd = false

    init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = inflateInit2_(stream, 15 + 32, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK)
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Feeds `input` with Z_SYNC_FLUSH and returns every byte that can be decoded from it now.
    func feed(_ input: [UInt8]) throws -> [UInt8] {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var input = input
        try input.withUnsafeMutableBufferPointer { inBuffer in
            stream.pointee.next_in = inBuffer.baseAddress
            stream.pointee.avail_in = UInt32(inBuffer.count)
            repeat {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { out in
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = UInt32(out.count)
                    let status = inflate(stream, Z_SYNC_FLUSH)
                    return (status, out.count - Int(stream.pointee.avail_out))
                }
                output.append(contentsOf: chunk[0..<produced])
                if status == Z_STREAM_END {
                    reachedEnd = true
                    break
                }
                guard status == Z_OK || status == Z_BUF_ERROR else { throw InflateFailure(status: status) }
                if produced == 0 && stream.pointee.avail_in == 0 { break }
            } while stream.pointee.avail_out == 0 || stream.pointee.avail_in > 0
            stream.pointee.next_in = nil
        }
        return output
    }
}

private struct InflateFailure: Error {
    var status: Int32
}

struct GzipEncoderTests {
    static let configurations: [GzipEncoder.Configuration] = [
        .body, .streaming, .init(level: 1, windowBits: 9, memLevel: 1), .init(level: 9, windowBits: 15, memLevel: 9),
    ]

    static func sampleEvents(count: Int) -> [[UInt8]] {
        (0..<count).map { index in
            ServerSentEvent(id: "\(index)", event: "state", data: "{\"counter\":\(index),\"status\":\"running\"}")
                .encoded
        }
    }

    /// Deterministic bytes that compress only a little (a linear congruential generator).
    static func noise(count: Int) -> [UInt8] {
        var state: UInt32 = 12_345
        return (0..<count).map { _ in
            state = state &* 1_103_515_245 &+ 12_345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
    }

    @Test(arguments: configurations)
    func roundTripsThroughZlibInflate(configuration: GzipEncoder.Configuration) throws {
        let input = Array(String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 200).utf8)
        let encoder = GzipEncoder(configuration: configuration)
        var compressed = encoder.compress(input[..<1000], flush: .none)
        compressed += encoder.compress(input[1000...], flush: .finish)
        #expect(encoder.isFinished)
        #expect(compressed.count < input.count / 4)
        let inflater = Inflater()
        #expect(try inflater.feed(compressed) == input)
        #expect(inflater.reachedEnd)
    }

    @Test(arguments: configurations)
    func eachSyncFlushedChunkDecodesBeforeTheNextArrives(configuration: GzipEncoder.Configuration) throws {
        let encoder = GzipEncoder(configuration: configuration)
        let inflater = Inflater()
        for event in Self.sampleEvents(count: 50) {
            let chunk = encoder.compress(event, flush: .sync)
            #expect(Array(chunk.suffix(4)) == [0, 0, 0xFF, 0xFF])
            #expect(try inflater.feed(chunk) == event)
        }
        let trailer = encoder.compress([UInt8](), flush: .finish)
        #expect(try inflater.feed(trailer).isEmpty)
        #expect(inflater.reachedEnd)
    }

    @Test func unsafeRawBufferInputMatchesCollectionInput() throws {
        let input = Array("same bytes either way".utf8)
        let viaCollection = GzipEncoder().compress(input, flush: .finish)
        let viaPointer = input.withUnsafeBytes { GzipEncoder().compress($0, flush: .finish) }
        #expect(viaCollection == viaPointer)
    }

    @Test func nonContiguousCollectionIsAccepted() throws {
        let input = Array("lazy collection input".utf8)
        let compressed = GzipEncoder().compress(input.lazy.map { $0 }, flush: .finish)
        #expect(try Inflater().feed(compressed) == input)
    }

    @Test(arguments: [GzipEncoder.Configuration.body, .streaming])
    func largeInputRoundTrips(configuration: GzipEncoder.Configuration) throws {
        let text = Array(String(repeating: "0123456789abcdef", count: 256 * 1024).utf8)
        let input = text + Self.noise(count: 3 * 1024 * 1024)
        let encoder = GzipEncoder(configuration: configuration)
        var compressed: [UInt8] = []
        var offset = 0
        while offset < input.count {
            let end = min(offset + 700_000, input.count)
            compressed += encoder.compress(input[offset..<end], flush: .none)
            offset = end
        }
        compressed += encoder.compress([UInt8](), flush: .finish)
        #expect(try Inflater().feed(compressed) == input)
    }

    @Test func emptyInputIsAValidEmptyGzipStream() throws {
        let compressed = GzipEncoder().compress([UInt8](), flush: .finish)
        #expect(Array(compressed.prefix(2)) == [0x1F, 0x8B])
        let inflater = Inflater()
        #expect(try inflater.feed(compressed).isEmpty)
        #expect(inflater.reachedEnd)
    }

    @Test func noFlushMayBufferEverything() throws {
        let encoder = GzipEncoder()
        let first = encoder.compress(Array("small".utf8), flush: .none)
        let rest = encoder.compress([UInt8](), flush: .finish)
        #expect(try Inflater().feed(first + rest) == Array("small".utf8))
    }

    @Test(.timeLimit(.minutes(1)))
    func finishedStreamDecodesWithPythonGzip() throws {
        let events = Self.sampleEvents(count: 20)
        let encoder = GzipEncoder(configuration: .streaming)
        var compressed: [UInt8] = []
        for event in events {
            compressed += encoder.compress(event, flush: .sync)
        }
        compressed += encoder.compress([UInt8](), flush: .finish)

        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("gzip-encoder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let compressedFile = directory.appendingPathComponent("stream.gz")
        let decodedFile = directory.appendingPathComponent("stream")
        try Data(compressed).write(to: compressedFile)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "timeout", "30", "python3", "-c",
            "import gzip, sys; open(sys.argv[2], 'wb').write(gzip.decompress(open(sys.argv[1], 'rb').read()))",
            compressedFile.path, decodedFile.path,
        ]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(try Data(contentsOf: decodedFile) == Data(events.joined()))
    }

    @Test func documentedBufferBytesFollowZlibFormula() {
        #expect(GzipEncoder.Configuration.body.documentedBufferBytes == 262_144)
        #expect(GzipEncoder.Configuration.streaming.documentedBufferBytes == 6_144)
    }
}
