import Foundation
import Testing
import Wire
import WireClient
import WireTestSupport

/// `ContentDecoder` against encodings made by python3: round trips at every chunk boundary, corrupt, truncated and
/// trailing bytes, concatenated gzip members, raw deflate, and the bomb limits.
@Suite(.timeLimit(.minutes(1)))
struct ContentDecoderTests {
    /// Decodes `encoded` fed in pieces of the given sizes (the last repeated), checking every piece's bound.
    static func decode(
        _ encoded: Data, _ coding: ContentCoding, pieces: [Int] = [8192],
        limits: ContentDecodingLimits = ContentDecodingLimits(),
        chunk: Int = 65_536
    ) throws(ContentDecodingError) -> Data {
        let decoder = try ContentDecoder(coding: coding, limits: limits, maximumChunkSize: chunk)
        var output = Data()
        var offset = 0
        var index = 0
        while offset < encoded.count {
            let size = pieces[min(index, pieces.count - 1)]
            index += 1
            let end = min(offset + size, encoded.count)
            decoder.push(ByteBuffer(bytes: encoded[encoded.startIndex + offset..<encoded.startIndex + end]))
            offset = end
            while let piece = try decoder.next() {
                #expect(piece.readableBytes > 0 && piece.readableBytes <= chunk)
                output.append(contentsOf: piece.readableBytesArray)
            }
        }
        try decoder.finish()
        #expect(decoder.encodedByteCount == Int64(encoded.count))
        #expect(decoder.decodedByteCount == Int64(output.count))
        return output
    }

    /// The error decoding throws, or nil.
    static func failure(
        _ encoded: Data, _ coding: ContentCoding, pieces: [Int] = [8192],
        limits: ContentDecodingLimits = ContentDecodingLimits()
    ) -> ContentDecodingError? {
        do {
            _ = try decode(encoded, coding, pieces: pieces, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [Compression.Format.gzip, .zlib, .raw])
    func aLargeBodyRoundTripsInBoundedPieces(format: Compression.Format) throws {
        let text = Compression.sampleText(bytes: 600_000)
        let encoded = try Compression.compress(text, format)
        let coding: ContentCoding = format == .gzip ? .gzip : .deflate
        #expect(mismatch(try Self.decode(encoded, coding, pieces: [3, 1000, 16_384]), text) == nil)
        #expect(mismatch(try Self.decode(encoded, coding, pieces: [encoded.count], chunk: 4096), text) == nil)
    }

    @Test(arguments: [Compression.Format.gzip, .zlib, .raw])
    func everyChunkBoundaryDecodesTheSame(format: Compression.Format) throws {
        let text = Compression.sampleText(bytes: 700)
        let encoded = try Compression.compress(text, format)
        let coding: ContentCoding = format == .gzip ? .gzip : .deflate
        for split in 0...encoded.count {
            #expect(
                mismatch(try Self.decode(encoded, coding, pieces: [split == 0 ? encoded.count : split, encoded.count]), text)
                    == nil,
                "split at \(split)")
        }
        // One byte at a time, with one-byte output pieces.
        #expect(mismatch(try Self.decode(encoded, coding, pieces: [1], chunk: 1), text) == nil)
    }

    @Test func aCorruptHeaderOrChecksumIsAnErrorWithItsOffset() throws {
        let text = Compression.sampleText(bytes: 5000)
        let encoded = try Compression.compress(text, .gzip)
        var badMagic = encoded
        badMagic[1] ^= 0xFF
        guard case .corrupt(.gzip, let offset, _) = Self.failure(badMagic, .gzip, pieces: [1]) else {
            Issue.record("a bad magic byte decoded")
            return
        }
        #expect(offset <= 2)
        var badChecksum = encoded
        badChecksum[encoded.count - 6] ^= 0x01  // inside the CRC-32 of the trailer
        guard case .corrupt(.gzip, let checksumOffset, let reason) = Self.failure(badChecksum, .gzip) else {
            Issue.record("a bad checksum decoded")
            return
        }
        #expect(checksumOffset >= Int64(encoded.count - 8) && checksumOffset <= Int64(encoded.count))
        #expect(reason.contains("check"))
        var badZlib = try Compression.compress(text, .zlib)
        badZlib[badZlib.count - 1] ^= 0x01  // the Adler-32
        guard case .corrupt(.deflate, _, _) = Self.failure(badZlib, .deflate) else {
            Issue.record("a bad Adler-32 decoded")
            return
        }
    }

    @Test func aTruncatedStreamIsAnErrorNotAShortBody() throws {
        let text = Compression.sampleText(bytes: 5000)
        for format in [Compression.Format.gzip, .zlib, .raw] {
            let encoded = try Compression.compress(text, format)
            let coding: ContentCoding = format == .gzip ? .gzip : .deflate
            for cut in [1, 4, encoded.count / 2, encoded.count - 1] {
                let short = encoded.prefix(cut)
                #expect(
                    Self.failure(short, coding, pieces: [97]) == .truncated(coding, encodedBytes: Int64(cut)),
                    "\(format) cut at \(cut)")
            }
        }
        // An empty body is an empty stream, not a truncated one.
        #expect(try Self.decode(Data(), .gzip) == Data())
        #expect(try Self.decode(Data(), .deflate) == Data())
    }

    @Test func concatenatedGzipMembersDecodeOneAfterAnother() throws {
        let first = Compression.sampleText(bytes: 3000, seed: 1)
        let second = Compression.sampleText(bytes: 2000, seed: 2)
        let firstEncoded = try Compression.compress(first, .gzip)
        let both = firstEncoded + (try Compression.compress(second, .gzip))
        #expect(mismatch(try Self.decode(both, .gzip, pieces: [1]), first + second) == nil)
        #expect(mismatch(try Self.decode(both, .gzip, pieces: [both.count]), first + second) == nil)
        let garbage = firstEncoded + Data("trailing".utf8)
        #expect(Self.failure(garbage, .gzip) == .trailingGarbage(.gzip, offset: Int64(firstEncoded.count)))
        let afterDeflate = (try Compression.compress(first, .zlib)) + Data([0])
        #expect(Self.failure(afterDeflate, .deflate) == .trailingGarbage(.deflate, offset: Int64(afterDeflate.count - 1)))
    }

    @Test func aBombIsRefusedEarlyByRatioOrSize() throws {
        let bomb = try Compression.zeroBomb(megabytes: 100)
        #expect(bomb.count < 200_000)
        let clock = ContinuousClock()
        let start = clock.now
        guard case .ratioExceeded(let decoded, let encoded, 1000) = Self.failure(bomb, .gzip) else {
            Issue.record("the bomb passed the default ratio limit")
            return
        }
        // Refused within a few pieces past the 1 MiB grace, long before 100 MiB.
        #expect(decoded <= 2 << 20 && decoded / encoded > 1000)
        // Grows with a sanitizer's slowdown.
        #expect(clock.now - start < .seconds(5) * Sanitizer.timeScale)
        let sizeOnly = ContentDecodingLimits(maximumRatio: nil, maximumDecodedSize: 10 << 20)
        guard case .sizeExceeded(let sized, 10 << 20) = Self.failure(bomb, .gzip, limits: sizeOnly) else {
            Issue.record("the bomb passed the size limit")
            return
        }
        #expect(sized <= (10 << 20) + 65_536)
        // Without limits it decodes whole, piece by piece.
        #expect(try Self.decode(bomb, .gzip, limits: .unlimited).count == 100 << 20)
    }

    @Test func codingNamesIdentityAndUnsupportedValues() throws {
        #expect(try ContentCoding(contentEncoding: nil) == .identity)
        #expect(try ContentCoding(contentEncoding: " X-GZIP ") == .gzip)
        #expect(try ContentCoding(contentEncoding: "identity, deflate") == .deflate)
        #expect(throws: ContentDecodingError.unsupportedCoding("br")) { try ContentCoding(contentEncoding: "br") }
        #expect(throws: ContentDecodingError.unsupportedCoding("deflate, gzip")) {
            try ContentCoding(contentEncoding: "deflate, gzip")
        }
        let bytes = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        #expect(mismatch(try Self.decode(bytes, .identity, pieces: [70_000], chunk: 65_536), bytes) == nil)
    }
}
