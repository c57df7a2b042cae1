import CWireZlib
import FoundationEssentials
import Histogram

/// HdrHistogram's portable forms of a histogram, as its Java, C and Go implementations write and read
/// them: the V2 encoding (a 40-byte big-endian header, then the counts as ZigZag LEB128 numbers with
/// runs of empty buckets as one negative number), and the compressed form of interval logs (a cookie,
/// a length and the V2 bytes through zlib's deflate), in base64.
///
/// hdrhistogram-swift keeps its counts private and has neither form, so the bucket layout is worked
/// out here from the histogram's parameters, by the same rules as every HdrHistogram.
package enum HistogramCoding {
    /// The V2 cookie with word size 0x10 (counts in ZigZag LEB128), and the compressed form's.
    static let cookie: UInt32 = 0x1c84_9313
    static let compressedCookie: UInt32 = 0x1c84_9314
    /// The V2 header's length in bytes.
    static let headerLength = 40
    /// The most bytes a compressed histogram may inflate to (a histogram of an hour at five digits is
    /// far smaller): a corrupt or hostile log cannot make the reader allocate without bound.
    static let maximumInflatedLength = 64 << 20

    /// A histogram's bytes that are not a histogram HdrHistogram wrote.
    package struct MalformedHistogram: Error, CustomStringConvertible, Equatable {
        /// What is wrong.
        package let description: String
        init(_ description: String) { self.description = description }
    }

    /// Where values go in a histogram's counts array: HdrHistogram's buckets of `2 × 10^digits`
    /// sub-buckets (rounded up to a power of two), each bucket twice as wide as the one before.
    struct Layout {
        let unitMagnitude: Int
        let subBucketHalfCountMagnitude: Int
        let subBucketCountMagnitude: Int

        /// The layout for these parameters; nil where no HdrHistogram could have them.
        init?(lowestDiscernibleValue: UInt64, significantDigits: Int) {
            guard lowestDiscernibleValue >= 1, lowestDiscernibleValue <= UInt64.max / 2, (0...5).contains(significantDigits)
            else {
                return nil
            }
            var largest = 2
            for _ in 0..<significantDigits { largest *= 10 }
            var magnitude = 0
            while 1 << magnitude < largest { magnitude += 1 }
            subBucketCountMagnitude = magnitude
            subBucketHalfCountMagnitude = max(magnitude, 1) - 1
            unitMagnitude = 63 - lowestDiscernibleValue.leadingZeroBitCount
            guard unitMagnitude + subBucketHalfCountMagnitude <= 61 else { return nil }
        }

        var subBucketHalfCount: Int { 1 << subBucketHalfCountMagnitude }

        /// The counts array index of `value`.
        func index(of value: UInt64) -> Int {
            let mask = UInt64((1 << subBucketCountMagnitude) - 1) << unitMagnitude
            let bucket = (64 - unitMagnitude - subBucketCountMagnitude) - (value | mask).leadingZeroBitCount
            let subBucket = Int(value >> (bucket + unitMagnitude))
            return ((bucket + 1) << subBucketHalfCountMagnitude) + subBucket - subBucketHalfCount
        }

        /// The lowest value counted at `index`, or nil beyond what 64 bits hold.
        func value(at index: Int) -> UInt64? {
            var bucket = (index >> subBucketHalfCountMagnitude) - 1
            var subBucket = (index & (subBucketHalfCount - 1)) + subBucketHalfCount
            if bucket < 0 {
                subBucket -= subBucketHalfCount
                bucket = 0
            }
            guard bucket + unitMagnitude + subBucketCountMagnitude <= 63 else { return nil }
            return UInt64(subBucket) << (bucket + unitMagnitude)
        }
    }

    // MARK: Encoding

    /// The V2 encoding of `histogram` (uncompressed).
    package static func encode(_ histogram: Histogram<UInt64>) -> [UInt8] {
        let layout = Layout(
            lowestDiscernibleValue: histogram.lowestDiscernibleValue,
            significantDigits: Int(histogram.numberOfSignificantValueDigits.rawValue))!
        var payload: [UInt8] = []
        var nextIndex = 0
        for bucket in histogram.recordedValues() {
            let index = layout.index(of: bucket.value)
            let zeros = index - nextIndex
            if zeros == 1 { appendZigZag(0, to: &payload) } else if zeros > 1 { appendZigZag(-Int64(zeros), to: &payload) }
            appendZigZag(Int64(clamping: bucket.count), to: &payload)
            nextIndex = index + 1
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerLength + payload.count)
        appendBigEndian(UInt64(cookie), bytes: 4, to: &bytes)
        appendBigEndian(UInt64(payload.count), bytes: 4, to: &bytes)
        appendBigEndian(0, bytes: 4, to: &bytes)  // normalizing index offset
        appendBigEndian(UInt64(histogram.numberOfSignificantValueDigits.rawValue), bytes: 4, to: &bytes)
        appendBigEndian(histogram.lowestDiscernibleValue, bytes: 8, to: &bytes)
        appendBigEndian(histogram.highestTrackableValue, bytes: 8, to: &bytes)
        appendBigEndian((1.0 as Double).bitPattern, bytes: 8, to: &bytes)  // integer to double conversion ratio
        return bytes + payload
    }

    /// The compressed form: the compressed cookie, the deflated length, and the V2 encoding deflated
    /// by zlib (with its zlib header, as Java's `Deflater` writes it).
    package static func encodeCompressed(_ histogram: Histogram<UInt64>) -> [UInt8] {
        let plain = encode(histogram)
        var length = compressBound(uLong(plain.count))
        var deflated = [UInt8](repeating: 0, count: Int(length))
        let result = deflated.withUnsafeMutableBufferPointer { output in
            plain.withUnsafeBufferPointer { input in
                compress2(output.baseAddress, &length, input.baseAddress, uLong(input.count), Z_DEFAULT_COMPRESSION)
            }
        }
        // compressBound is enough by zlib's contract, and memory for its state is all that could fail.
        precondition(result == Z_OK, "zlib's compress2 failed (\(result))")
        var bytes: [UInt8] = []
        appendBigEndian(UInt64(compressedCookie), bytes: 4, to: &bytes)
        appendBigEndian(UInt64(length), bytes: 4, to: &bytes)
        return bytes + deflated[..<Int(length)]
    }

    /// The compressed form in base64, as an interval log line carries it (`HISTFAAA…`).
    package static func base64(_ histogram: Histogram<UInt64>) -> String {
        Data(encodeCompressed(histogram)).base64EncodedString()
    }

    // MARK: Decoding

    /// Reads the base64 of a compressed (or plain V2) histogram.
    package static func decode(base64 text: some StringProtocol) throws(MalformedHistogram) -> Histogram<UInt64> {
        guard let data = Data(base64Encoded: String(text)) else { throw MalformedHistogram("not base64") }
        return try decode(Array(data))
    }

    /// Reads a compressed or plain V2 histogram.
    package static func decode(_ bytes: [UInt8]) throws(MalformedHistogram) -> Histogram<UInt64> {
        var reader = BigEndianReader(bytes: bytes[...])
        guard let cookie = reader.read(4) else { throw MalformedHistogram("shorter than a histogram's cookie") }
        switch UInt32(cookie) & ~0xf0 {
        case compressedCookie & ~0xf0:
            guard let length = reader.read(4), Int(length) <= reader.remaining.count else {
                throw MalformedHistogram("the compressed length is missing or longer than the bytes")
            }
            return try decode(inflate(Array(reader.remaining.prefix(Int(length)))))
        case Self.cookie & ~0xf0:
            return try decodePlain(bytes)
        default:
            throw MalformedHistogram("cookie 0x\(String(cookie, radix: 16)) is not an HdrHistogram V2 encoding")
        }
    }

    private static func inflate(_ deflated: [UInt8]) throws(MalformedHistogram) -> [UInt8] {
        var capacity = max(4_096, deflated.count * 8)
        while true {
            var length = uLong(capacity)
            var output = [UInt8](repeating: 0, count: capacity)
            let result = output.withUnsafeMutableBufferPointer { output in
                deflated.withUnsafeBufferPointer { input in
                    uncompress(output.baseAddress, &length, input.baseAddress, uLong(input.count))
                }
            }
            switch result {
            case Z_OK: return Array(output[..<Int(length)])
            case Z_BUF_ERROR where capacity < maximumInflatedLength: capacity *= 4
            default: throw MalformedHistogram("the compressed histogram does not inflate (zlib \(result))")
            }
        }
    }

    private static func decodePlain(_ bytes: [UInt8]) throws(MalformedHistogram) -> Histogram<UInt64> {
        var reader = BigEndianReader(bytes: bytes[...])
        guard bytes.count >= headerLength, reader.read(4) != nil, let payloadLength = reader.read(4),
            let offset = reader.read(4), let digits = reader.read(4), let lowest = reader.read(8),
            let highest = reader.read(8), reader.read(8) != nil
        else { throw MalformedHistogram("shorter than a V2 header") }
        guard Int(payloadLength) <= reader.remaining.count else {
            throw MalformedHistogram(
                "the payload length \(payloadLength) is longer than the \(reader.remaining.count) bytes left")
        }
        guard offset == 0 else { throw MalformedHistogram("a normalizing index offset (\(offset)) is not supported") }
        guard let layout = Layout(lowestDiscernibleValue: lowest, significantDigits: Int(digits)),
            let significant = SignificantDigits(rawValue: Int8(digits))
        else {
            throw MalformedHistogram("lowest discernible value \(lowest) with \(digits) significant digits is no HdrHistogram")
        }
        var histogram = Histogram<UInt64>(
            lowestDiscernibleValue: lowest, highestTrackableValue: max(highest, lowest * 2),
            numberOfSignificantValueDigits: significant)
        histogram.autoResize = true
        var payload = reader.remaining.prefix(Int(payloadLength))
        var index = 0
        while !payload.isEmpty {
            guard let number = readZigZag(&payload) else { throw MalformedHistogram("a count is cut off") }
            if number < 0 {
                guard number > -(1 << 40) else { throw MalformedHistogram("a run of \(-number) empty buckets") }
                index += Int(-number)
                continue
            }
            if number > 0 {
                guard let value = layout.value(at: index) else { throw MalformedHistogram("bucket \(index) is beyond 64 bits") }
                // At the bucket's highest value, as HdrHistogram's decoders leave the maximum.
                histogram.record(histogram.highestEquivalentForValue(value), count: UInt64(number))
            }
            index += 1
        }
        return histogram
    }

    // MARK: Numbers

    /// ZigZag, then LEB128 in at most nine bytes, the ninth holding the top eight bits whole (HdrHistogram's form).
    package static func appendZigZag(_ value: Int64, to bytes: inout [UInt8]) {
        var bits = UInt64(bitPattern: (value << 1) ^ (value >> 63))
        for _ in 0..<8 {
            if bits >> 7 == 0 {
                bytes.append(UInt8(bits))
                return
            }
            bytes.append(UInt8(bits & 0x7f) | 0x80)
            bits >>= 7
        }
        bytes.append(UInt8(bits))
    }

    package static func readZigZag(_ bytes: inout ArraySlice<UInt8>) -> Int64? {
        var bits: UInt64 = 0
        for group in 0..<9 {
            guard let byte = bytes.popFirst() else { return nil }
            if group == 8 {
                bits |= UInt64(byte) << 56
                break
            }
            bits |= UInt64(byte & 0x7f) << (7 * group)
            if byte & 0x80 == 0 { break }
        }
        return Int64(bitPattern: bits >> 1) ^ -Int64(bitPattern: bits & 1)
    }

    private static func appendBigEndian(_ value: UInt64, bytes count: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (count - 1) * 8, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    private struct BigEndianReader {
        var remaining: ArraySlice<UInt8>
        init(bytes: ArraySlice<UInt8>) { remaining = bytes }

        mutating func read(_ count: Int) -> UInt64? {
            guard remaining.count >= count else { return nil }
            let value = remaining.prefix(count).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            remaining = remaining.dropFirst(count)
            return value
        }
    }
}
