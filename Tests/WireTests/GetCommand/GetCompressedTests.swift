import Foundation
import Testing
import WireTestSupport

extension IOSuite {
    /// `wire get --compressed` against nginx: `gzip on` compresses a text file on the fly, `gzip_static on` serves
    /// hand-made `.gz` files (truncated, a bomb) as `Content-Encoding: gzip`.
    @Suite(.enabled(if: TestNginx.isInstalled, "nginx is not installed"))
    struct GetCompressedTests {
        static let text = Data((0..<60_000).map { index in "abcdefghij klmnop\n".utf8.map { $0 }[index % 18] })

        /// Runs python3 `program` with an output file as its argument; returns that file.
        static func python(_ program: String) async throws -> Data {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let output = folder.appendingPathComponent("out").path
            let run = try await WireToolRunner.run(program: URL(fileURLWithPath: "/usr/bin/python3"), ["-c", program, output])
            try #require(run.status == 0, "python3: \(run.errors)")
            return try Data(contentsOf: URL(fileURLWithPath: output))
        }

        @Test func compressedDecodesAndPlainGetPassesTheGzipThrough() async throws {
            let nginx = try TestNginx(
                files: ["a.txt": Self.text],
                httpDirectives: "gzip on; gzip_types text/plain application/json; gzip_min_length 0;")
            defer { nginx.stop() }
            let url = nginx.baseURL + "/a.txt"
            let decoded = try await WireToolRunner.run(["get", "-s", "-v", "--compressed", url])
            #expect(decoded.status == 0)
            #expect(decoded.output.elementsEqual(Self.text))
            // -v shows the heads as they were: the offer and the encoded answer.
            #expect(decoded.errors.contains("> Accept-Encoding: deflate, gzip"))
            #expect(decoded.errors.lowercased().contains("< content-encoding: gzip"))
            let raw = try await WireToolRunner.run(["get", "-s", "-H", "Accept-Encoding: gzip", url])
            #expect(raw.status == 0)
            #expect(raw.output.starts(with: [0x1F, 0x8B]) && raw.output.count < Self.text.count / 4)
        }

        @Test func aTruncatedOrExplodingGzipExits61() async throws {
            let gzip = try await Self.python(
                "import gzip,sys; open(sys.argv[1],'wb').write(gzip.compress(b'x' * 100000, mtime=0))")
            let bomb = try await Self.python(
                "import gzip,sys; open(sys.argv[1],'wb').write(gzip.compress(bytes(50 << 20), 9, mtime=0))")
            var corrupt = gzip
            corrupt[corrupt.count - 5] ^= 0x01
            let nginx = try TestNginx(
                files: [
                    "cut.txt": Data(), "cut.txt.gz": gzip.prefix(gzip.count - 10),
                    "bomb.txt": Data(), "bomb.txt.gz": bomb,
                    "bad.txt": Data(), "bad.txt.gz": corrupt,
                    "good.txt": Data(), "good.txt.gz": gzip,
                ],
                httpDirectives: "gzip_static on;")
            defer { nginx.stop() }
            let good = try await WireToolRunner.run(["get", "-s", "--compressed", nginx.baseURL + "/good.txt"])
            #expect(good.status == 0 && good.output.elementsEqual(repeatElement(UInt8(ascii: "x"), count: 100_000)))
            for (name, words) in [("cut", "truncated"), ("bomb", "ratio limit"), ("bad", "corrupt gzip data")] {
                let run = try await WireToolRunner.run(["get", "-sS", "--compressed", nginx.baseURL + "/\(name).txt"])
                #expect(run.status == 61, "\(name): \(run.errors)")
                #expect(run.errors.contains(words), "\(name): \(run.errors)")
            }
            #expect(
                try await WireToolRunner.run(["get", "-s", "--compressed", nginx.baseURL + "/bomb.txt"]).output.count <= 2 << 20)
        }
    }
}
