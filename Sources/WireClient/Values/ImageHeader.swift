import FoundationEssentials

/// An image's format and pixel size, read from its first bytes without decoding it.
///
/// Built to be fed anything (a fuzzer, a hostile server): every read goes through `ByteReader`, which answers nil
/// past the end instead of trapping; arithmetic on offsets cannot overflow (offsets only grow by values read from at
/// most two bytes, and loops end when the data does); a zero width or height is refused.
package struct ImageHeader: Sendable, Hashable {
    /// The formats recognised by their signatures.
    package enum Format: String, Sendable, Hashable, CaseIterable {
        /// PNG: size from the IHDR chunk.
        case png
        /// JPEG: size from the first SOFn segment.
        case jpeg
        /// GIF 87a/89a: the logical screen size.
        case gif
        /// WebP: lossy (`VP8 `), lossless (`VP8L`) or extended (`VP8X` canvas).
        case webp
        /// Windows bitmap: the DIB header's size (top-down bitmaps have a negative height; the magnitude is used).
        case bmp
        /// Windows icon: the first directory entry (0 means 256).
        case ico

        /// The format's media type.
        package var mimeType: String {
            switch self {
            case .png: "image/png"
            case .jpeg: "image/jpeg"
            case .gif: "image/gif"
            case .webp: "image/webp"
            case .bmp: "image/bmp"
            case .ico: "image/x-icon"
            }
        }
    }

    /// A format and size as the per-format readers return them.
    private typealias Size = (format: Format, width: Int, height: Int)

    /// The format.
    package var format: Format
    /// The width in pixels (at least 1).
    package var pixelWidth: Int
    /// The height in pixels (at least 1).
    package var pixelHeight: Int

    /// Creates a header from known values.
    /// - Parameters:
    ///   - format: The format.
    ///   - pixelWidth: The width in pixels.
    ///   - pixelHeight: The height in pixels.
    package init(format: Format, pixelWidth: Int, pixelHeight: Int) {
        self.format = format
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
    }

    /// Reads the header of `data`.
    /// - Parameter data: The image's bytes (the first few hundred are usually enough; JPEG may need more).
    /// - Returns: nil for an unknown signature, a truncated or malformed header, or a zero dimension.
    package init?(_ data: Data) {
        self.init(bytes: Array(data))
    }

    /// Reads the header of `bytes`.
    /// - Parameter bytes: The image's bytes.
    /// - Returns: nil for an unknown signature, a truncated or malformed header, or a zero dimension.
    package init?(bytes: [UInt8]) {
        let reader = ByteReader(bytes: bytes)
        let size: Size?
        if reader.matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], at: 0) {
            size = Self.png(reader)
        } else if reader.matches([0xFF, 0xD8], at: 0) {
            size = Self.jpeg(reader)
        } else if reader.matches(Array("GIF87a".utf8), at: 0) || reader.matches(Array("GIF89a".utf8), at: 0) {
            size = Self.gif(reader)
        } else if reader.matches(Array("RIFF".utf8), at: 0) && reader.matches(Array("WEBP".utf8), at: 8) {
            size = Self.webp(reader)
        } else if reader.matches(Array("BM".utf8), at: 0) {
            size = Self.bmp(reader)
        } else if reader.matches([0x00, 0x00, 0x01, 0x00], at: 0) {
            size = Self.ico(reader)
        } else {
            size = nil
        }
        guard let size, size.width > 0, size.height > 0 else { return nil }
        self.init(format: size.format, pixelWidth: size.width, pixelHeight: size.height)
    }

    /// PNG: the first chunk must be IHDR; width and height are big-endian at 16 and 20 (at most 2^31 − 1).
    private static func png(_ reader: ByteReader) -> Size? {
        guard reader.matches(Array("IHDR".utf8), at: 12), let width = reader.uint32BE(at: 16),
            let height = reader.uint32BE(at: 20),
            width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF
        else { return nil }
        return (.png, Int(width), Int(height))
    }

    /// GIF: the logical screen descriptor, little-endian at 6 and 8.
    private static func gif(_ reader: ByteReader) -> Size? {
        guard let width = reader.uint16LE(at: 6), let height = reader.uint16LE(at: 8) else { return nil }
        return (.gif, Int(width), Int(height))
    }

    /// JPEG: walks the marker segments until a start-of-frame (SOF0–SOF15 except DHT C4, JPG C8 and DAC CC); stops at
    /// the start of scan or the end of image. Fill bytes (0xFF runs) and standalone markers are skipped.
    private static func jpeg(_ reader: ByteReader) -> Size? {
        var position = 2
        while true {
            guard reader.byte(at: position) == 0xFF else { return nil }
            while reader.byte(at: position) == 0xFF { position += 1 }
            guard let marker = reader.byte(at: position) else { return nil }
            position += 1
            switch marker {
            case 0x01, 0xD0...0xD8:
                continue
            case 0xD9, 0xDA:
                return nil
            default:
                break
            }
            guard let length = reader.uint16BE(at: position), length >= 2 else { return nil }
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                guard let height = reader.uint16BE(at: position + 3), let width = reader.uint16BE(at: position + 5) else {
                    return nil
                }
                return (.jpeg, Int(width), Int(height))
            }
            position += Int(length)
        }
    }

    /// WebP: the first chunk after `WEBP` says which bitstream follows.
    private static func webp(_ reader: ByteReader) -> Size? {
        if reader.matches(Array("VP8 ".utf8), at: 12) {
            // A key frame: 3-byte frame tag, start code 9D 01 2A, then 14-bit width and height (2 bits of scale each).
            guard reader.matches([0x9D, 0x01, 0x2A], at: 23), let width = reader.uint16LE(at: 26),
                let height = reader.uint16LE(at: 28)
            else {
                return nil
            }
            return (.webp, Int(width & 0x3FFF), Int(height & 0x3FFF))
        }
        if reader.matches(Array("VP8L".utf8), at: 12) {
            // Signature 0x2F, then width − 1 and height − 1 in 14 bits each, little-endian bit order.
            guard reader.byte(at: 20) == 0x2F, let bits = reader.uint32LE(at: 21) else { return nil }
            return (.webp, Int(bits & 0x3FFF) + 1, Int((bits >> 14) & 0x3FFF) + 1)
        }
        if reader.matches(Array("VP8X".utf8), at: 12) {
            // Flags and reserved bytes, then canvas width − 1 and height − 1 in 24 bits each.
            guard let width = reader.uint24LE(at: 24), let height = reader.uint24LE(at: 27) else { return nil }
            return (.webp, Int(width) + 1, Int(height) + 1)
        }
        return nil
    }

    /// BMP: a 12-byte core header has 16-bit sizes; larger headers have signed 32-bit ones.
    private static func bmp(_ reader: ByteReader) -> Size? {
        guard let headerSize = reader.uint32LE(at: 14) else { return nil }
        if headerSize == 12 {
            guard let width = reader.uint16LE(at: 18), let height = reader.uint16LE(at: 20) else { return nil }
            return (.bmp, Int(width), Int(height))
        }
        guard headerSize >= 40, let width = reader.uint32LE(at: 18), let height = reader.uint32LE(at: 22) else { return nil }
        let signedWidth = Int(Int32(bitPattern: width))
        let signedHeight = Int(Int32(bitPattern: height))
        guard signedWidth > 0 else { return nil }
        return (.bmp, signedWidth, Int(signedHeight.magnitude))
    }

    /// ICO: at least one entry; the first entry's width and height bytes, 0 meaning 256.
    private static func ico(_ reader: ByteReader) -> Size? {
        guard let count = reader.uint16LE(at: 4), count > 0, let width = reader.byte(at: 6), let height = reader.byte(at: 7)
        else { return nil }
        return (.ico, width == 0 ? 256 : Int(width), height == 0 ? 256 : Int(height))
    }
}

/// Bounds-checked reads of fixed-width integers: nil instead of a trap when a read would pass the end.
struct ByteReader {
    let bytes: [UInt8]

    func byte(at offset: Int) -> UInt8? {
        offset >= 0 && offset < bytes.count ? bytes[offset] : nil
    }

    func matches(_ expected: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, bytes.count - offset >= expected.count else { return false }
        return bytes[offset..<offset + expected.count].elementsEqual(expected)
    }

    func uint16BE(at offset: Int) -> UInt16? {
        guard let high = byte(at: offset), let low = byte(at: offset + 1) else { return nil }
        return UInt16(high) << 8 | UInt16(low)
    }

    func uint16LE(at offset: Int) -> UInt16? {
        guard let low = byte(at: offset), let high = byte(at: offset + 1) else { return nil }
        return UInt16(high) << 8 | UInt16(low)
    }

    func uint24LE(at offset: Int) -> UInt32? {
        guard let low = uint16LE(at: offset), let high = byte(at: offset + 2) else { return nil }
        return UInt32(high) << 16 | UInt32(low)
    }

    func uint32BE(at offset: Int) -> UInt32? {
        guard let high = uint16BE(at: offset), let low = uint16BE(at: offset + 2) else { return nil }
        return UInt32(high) << 16 | UInt32(low)
    }

    func uint32LE(at offset: Int) -> UInt32? {
        guard let low = uint16LE(at: offset), let high = uint16LE(at: offset + 2) else { return nil }
        return UInt32(high) << 16 | UInt32(low)
    }
}
