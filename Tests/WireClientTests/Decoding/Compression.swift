import Foundation
import Testing

/// Encoded bodies for the decoding tests, made by python3's gzip and zlib modules (a real encoder, not ours).
enum Compression {
    /// How to encode.
    enum Format: String {
        /// `gzip.compress` (mtime 0).
        case gzip
        /// `zlib.compress`: the RFC 1950 wrapper.
        case zlib
        /// A raw RFC 1951 stream (`wbits=-15`).
        case raw
    }

    /// `data` encoded as `format`.
    static func compress(_ data: Data, _ format: Format) throws -> Data {
        let program =
            switch format {
            case .gzip:
                "import gzip,sys; d=open(sys.argv[1],'rb').read(); open(sys.argv[2],'wb').write(gzip.compress(d, mtime=0))"
            case .zlib: "import zlib,sys; d=open(sys.argv[1],'rb').read(); open(sys.argv[2],'wb').write(zlib.compress(d))"
            case .raw:
                "import zlib,sys; d=open(sys.argv[1],'rb').read(); c=zlib.compressobj(9, zlib.DEFLATED, -15); "
                    + "open(sys.argv[2],'wb').write(c.compress(d)+c.flush())"
            }
        return try python(program, input: data)
    }

    /// `megabytes` MiB of zero bytes, gzipped at level 9: about a thousandth of that on the wire.
    static func zeroBomb(megabytes: Int) throws -> Data {
        try python(
            "import gzip,sys; open(sys.argv[2],'wb').write(gzip.compress(bytes(\(megabytes) << 20), 9, mtime=0))", input: Data())
    }

    /// Runs `program` with an input file and an output file as its arguments; returns the output file.
    private static func python(_ program: String, input: Data) throws -> Data {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try input.write(to: URL(fileURLWithPath: folder + "/in"))
        let status = try runBash(
            #"python3 -c "$PROGRAM" "$FOLDER/in" "$FOLDER/out""#, environment: ["PROGRAM": program, "FOLDER": folder])
        try #require(status == 0, "python3 failed")
        return try Data(contentsOf: URL(fileURLWithPath: folder + "/out"))
    }

    /// Some text that compresses like a real document: words, numbers, line ends.
    static func sampleText(bytes: Int, seed: UInt64 = 7) -> Data {
        let words = ["wire", "client", "gzip", "deflate", "stream", "chunk", "body", "header", "zlib", "window"]
        var state = seed
        var text = Data()
        while text.count < bytes {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let word = words[Int(state >> 33) % words.count]
            text.append(contentsOf: "\(word) \(state >> 50)".utf8)
            text.append(state >> 60 == 0 ? 0x0A : 0x20)
        }
        return text.prefix(bytes)
    }
}

/// Where two bodies differ (their lengths and the first differing offset), or nil when they are equal: compared so,
/// a failure reports in a line instead of Swift Testing's diff of two large `Data` values, which takes minutes.
func mismatch(_ actual: Data?, _ expected: Data) -> String? {
    guard let actual else { return "no body" }
    guard actual != expected else { return nil }
    let first =
        zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(actual.count, expected.count)
    return "\(actual.count) bytes instead of \(expected.count), first difference at \(first)"
}
