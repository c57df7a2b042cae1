import FoundationEssentials
import Testing
import WireTestSupport
import Wire
import WireClient

/// Image headers for the tests, built byte by byte.
enum ImageFixtures {
    static func be32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
    static func le32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
    static func le16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
    static func be16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }

    static func png(width: UInt32, height: UInt32) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be32(13) + Array("IHDR".utf8) + be32(width) + be32(height)
            + [8, 6, 0, 0, 0] + [0x12, 0x34, 0x56, 0x78]
    }

    static func gif(width: UInt16, height: UInt16) -> [UInt8] {
        Array("GIF89a".utf8) + le16(width) + le16(height) + [0xF7, 0, 0] + [0x3B]
    }

    static func jpeg(width: UInt16, height: UInt16, sof: UInt8 = 0xC0) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += [0xFF, 0xE0] + be16(16) + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
        bytes += [0xFF, 0xC4] + be16(4) + [0, 0]  // a DHT segment: its marker is in the SOF range but is not a frame
        bytes += [0xFF, 0xFF, 0xDB] + be16(4) + [0, 0]  // a fill byte before the marker
        bytes += [0xFF, sof] + be16(17) + [8] + be16(height) + be16(width) + [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
        bytes += [0xFF, 0xDA] + be16(8) + [1, 1, 0, 0, 0x3F, 0]
        return bytes + [0xFF, 0xD9]
    }

    static func riff(_ chunk: String, _ payload: [UInt8]) -> [UInt8] {
        Array("RIFF".utf8) + le32(UInt32(payload.count + 12)) + Array("WEBP".utf8) + Array(chunk.utf8)
            + le32(UInt32(payload.count)) + payload
    }

    static func webpLossy(width: UInt16, height: UInt16) -> [UInt8] {
        riff("VP8 ", [0x30, 0x01, 0x00, 0x9D, 0x01, 0x2A] + le16(width) + le16(height) + [0, 0])
    }

    static func webpLossless(width: UInt32, height: UInt32) -> [UInt8] {
        riff("VP8L", [0x2F] + le32((width - 1) | (height - 1) << 14) + [0])
    }

    static func webpExtended(width: UInt32, height: UInt32) -> [UInt8] {
        riff("VP8X", [0x10, 0, 0, 0] + Array(le32(width - 1).prefix(3)) + Array(le32(height - 1).prefix(3)))
    }

    static func bmp(width: Int32, height: Int32) -> [UInt8] {
        Array("BM".utf8) + le32(70) + [0, 0, 0, 0] + le32(54) + le32(40) + le32(UInt32(bitPattern: width))
            + le32(UInt32(bitPattern: height))
            + le16(1) + le16(24) + [UInt8](repeating: 0, count: 24)
    }

    static func ico(width: UInt8, height: UInt8) -> [UInt8] {
        [0, 0, 1, 0] + le16(1) + [width, height, 0, 0] + le16(1) + le16(32) + le32(40) + le32(22)
    }
}

/// The image serializer: image type and pixel size read from headers, never trapping on malformed input.
@Suite struct ImageResponseSerializerTests {
    typealias F = ImageFixtures

    @Test func readsEveryFormatsSize() {
        let cases: [([UInt8], ImageHeader.Format, Int, Int)] = [
            (F.png(width: 640, height: 480), .png, 640, 480),
            (F.png(width: 0x7FFF_FFFF, height: 1), .png, 0x7FFF_FFFF, 1),
            (F.gif(width: 300, height: 2), .gif, 300, 2),
            (F.jpeg(width: 1024, height: 768), .jpeg, 1024, 768),
            (F.jpeg(width: 5, height: 7, sof: 0xC2), .jpeg, 5, 7),
            (F.webpLossy(width: 0xC000 | 400, height: 301), .webp, 400, 301),
            (F.webpLossless(width: 16384, height: 3), .webp, 16384, 3),
            (F.webpExtended(width: 1 << 24, height: 9), .webp, 1 << 24, 9),
            (F.bmp(width: 33, height: -44), .bmp, 33, 44),
            (F.bmp(width: 33, height: 44), .bmp, 33, 44),
            (F.ico(width: 0, height: 16), .ico, 256, 16),
        ]
        for (bytes, format, width, height) in cases {
            let header = ImageHeader(bytes: bytes)
            #expect(header == ImageHeader(format: format, pixelWidth: width, pixelHeight: height), "\(format) \(width)x\(height)")
        }
    }

    @Test func refusesZeroSizesAndOversizedPNGs() {
        #expect(ImageHeader(bytes: F.png(width: 0, height: 5)) == nil)
        #expect(ImageHeader(bytes: F.png(width: 0x8000_0000, height: 5)) == nil)
        #expect(ImageHeader(bytes: F.gif(width: 5, height: 0)) == nil)
        #expect(ImageHeader(bytes: F.jpeg(width: 0, height: 5)) == nil)
        #expect(ImageHeader(bytes: F.bmp(width: -3, height: 5)) == nil)
        #expect(ImageHeader(bytes: Array("not an image".utf8)) == nil)
        #expect(ImageHeader(bytes: []) == nil)
        // A JPEG whose scan starts before any frame header has no size to read.
        #expect(ImageHeader(bytes: [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x08, 1, 1, 0, 0, 0x3F, 0]) == nil)
        #expect(ImageHeader(bytes: [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01]) == nil)
    }

    @Test func everyTruncationAndMutationIsSafe() {
        let samples = [
            F.png(width: 1, height: 1), F.gif(width: 1, height: 1), F.jpeg(width: 1, height: 1), F.webpLossy(width: 1, height: 1),
            F.webpLossless(width: 1, height: 1), F.webpExtended(width: 1, height: 1), F.bmp(width: 1, height: 1),
            F.ico(width: 1, height: 1),
        ]
        for sample in samples {
            for length in 0..<sample.count {
                let header = ImageHeader(bytes: Array(sample.prefix(length)))
                if let header { #expect(header.pixelWidth > 0 && header.pixelHeight > 0) }
            }
            #expect(ImageHeader(bytes: sample) != nil)
        }
        var generator = SplitMix64(seed: 7)
        for round in 0..<20_000 {
            var bytes = samples[round % samples.count]
            for _ in 0..<1 + Int(generator.next() % 6) {
                bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
            if generator.next() % 4 == 0 { bytes = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count + 1)))) }
            if let header = ImageHeader(bytes: bytes) { #expect(header.pixelWidth > 0 && header.pixelHeight > 0) }
        }
    }

    @Test func serializerReturnsImageData() throws {
        let bytes = Data(F.png(width: 10, height: 20))
        let result = ImageResponseSerializer().serialize(response: makeResponse(200, "image/png"), data: bytes)
        let image = try #require(result.value as? ImageData)
        #expect(image == ImageData(data: bytes, mimeType: "image/png", pixelWidth: 10, pixelHeight: 20, scale: 1))
        #expect(result.error == nil)
        var scaled = ImageResponseSerializer()
        scaled.imageScale = 2
        #expect((scaled.serialize(response: makeResponse(200, "image/png"), data: bytes).value as? ImageData)?.scale == 2)
    }

    @Test func serializerRules() {
        let serializer = ImageResponseSerializer()
        #expect(
            serializer.acceptableContentTypes == [
                "image/tiff", "image/jpeg", "image/gif", "image/png", "image/ico", "image/x-icon", "image/bmp", "image/x-bmp",
                "image/x-xbitmap", "image/x-win-bitmap",
            ])
        let garbage = serializer.serialize(response: makeResponse(200, "image/png"), data: Data("<html>".utf8))
        #expect(garbage.value == nil)
        #expect(garbage.error?.code == .responseSerializationFailed)
        #expect(garbage.error?.responseData == Data("<html>".utf8))
        let wrongType = serializer.serialize(response: makeResponse(200, "text/html"), data: Data(F.png(width: 1, height: 1)))
        #expect(wrongType.value == nil && wrongType.error?.code == .unacceptableContentType("text/html"))
        let empty = serializer.serialize(response: makeResponse(200, "image/png"), data: Data())
        #expect(empty.value == nil && empty.error == nil)
        let notFound = serializer.serialize(response: makeResponse(404, "image/gif"), data: Data(F.gif(width: 2, height: 3)))
        #expect((notFound.value as? ImageData)?.pixelWidth == 2)
        #expect(notFound.error?.code == .unacceptableStatusCode(404))
    }
}
