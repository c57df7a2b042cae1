import Foundation
import Synchronization
import Testing
import WireTestSupport
@_spi(Locking) import Wire
import WireTLS

extension IOSuite {
    /// `HTTPFileHandler` mounted on an `HTTPServer` directly: curl and a raw client get the file's exact bytes, sent by
    /// the kernel on plain connections and read and encrypted on TLS ones; a reset or a shutdown mid-transfer leaves
    /// the file closed.
    @Suite(.exclusiveIO) struct HTTPFileHandlerTests {
        /// A root with `big.bin` (3 MiB and a bit of random bytes), `small.txt` and a sparse `huge.bin` of 256 MiB.
        struct Site {
            let root: String
            let big: [UInt8]
            var bigPath: String { root + "/big.bin" }
            var hugePath: String { root + "/huge.bin" }

            init() throws {
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wire-files-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                root = try #require(LocalFiles.realPath(folder.path))
                var generator = SystemRandomNumberGenerator()
                var words = [UInt64](repeating: 0, count: (3 << 20) / 8 + 5)
                for index in words.indices { words[index] = generator.next() }
                big = words.withUnsafeBytes { Array($0.prefix((3 << 20) + 37)) }
                try Data(big).write(to: URL(fileURLWithPath: root + "/big.bin"))
                try Data("small file\n".utf8).write(to: URL(fileURLWithPath: root + "/small.txt"))
                #expect(FileManager.default.createFile(atPath: root + "/huge.bin", contents: nil))
                #expect(truncate(root + "/huge.bin", 256 << 20) == 0)
            }

            func remove() { try? FileManager.default.removeItem(atPath: root) }
        }

        /// A file for curl to write into, removed with the site.
        static func outputPath(_ site: Site, _ name: String) -> String { site.root + "/.out-" + name }

        /// `sha256sum` of the file at `path`.
        static func sha256(_ path: String) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
            process.arguments = [path]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
        }

        /// Whether a descriptor of this process is open on `path`.
        static func isOpen(_ path: String) -> Bool {
            let links = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return links.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path }
        }

        /// A server with the handler on `site`, started before `body` and stopped after it.
        static func withFileServer(
            _ site: Site, configure: (inout HTTPServerConfiguration) -> Void = { _ in },
            _ body: @escaping @Sendable (ServerHarness) async throws -> Void
        ) async throws {
            let harness = try await ServerHarness.start(configure: configure, handler: try HTTPFileHandler(root: site.root))
            do {
                try await withTimeout(seconds: 60) { try await body(harness) }
            } catch {
                await harness.stop()
                throw error
            }
            await harness.stop()
        }

        @Test func curlGetsTheWholeFileSentByTheKernel() async throws {
            let site = try Site()
            defer { site.remove() }
            try await Self.withFileServer(site) { harness in
                let out = Self.outputPath(site, "whole")
                let before = SendFileStatistics.bytesSent.load(ordering: .relaxed)
                let result = try await runCurl([
                    "-s", "-o", out, "-w", "%{http_code} %{size_download}",
                    "http://127.0.0.1:\(harness.port)/big.bin",
                ])
                #expect(result.stdout == "200 \(site.big.count)")
                #expect(try Self.sha256(out) == Self.sha256(site.bigPath))
                // The body went through sendfile(2), not through reads and writes.
                #expect(SendFileStatistics.bytesSent.load(ordering: .relaxed) - before >= site.big.count)
            }
        }

        @Test func rangesConditionalRequestsAndHead() async throws {
            let site = try Site()
            defer { site.remove() }
            let big = site.big
            try await Self.withFileServer(site) { harness in
                let url = "http://127.0.0.1:\(harness.port)/big.bin"
                let size = big.count
                // One range, large enough to go by sendfile, and a small suffix range read inline.
                let one = Self.outputPath(site, "one")
                let ranged = try await runCurl(["-s", "-r", "1000-599999", "-D", "-", "-o", one, url])
                #expect(ranged.stdout.hasPrefix("HTTP/1.1 206"))
                #expect(ranged.stdout.contains("Content-Range: bytes 1000-599999/\(size)"))
                #expect(try Data(contentsOf: URL(fileURLWithPath: one)) == Data(big[1000...599999]))
                let suffix = Self.outputPath(site, "suffix")
                _ = try await runCurl(["-s", "-r", "-100", "-o", suffix, url])
                #expect(try Data(contentsOf: URL(fileURLWithPath: suffix)) == Data(big[(size - 100)...]))

                // Two ranges: multipart/byteranges, every byte where the boundary's framing says.
                let multi = Self.outputPath(site, "multi")
                let multipart = try await runCurl(["-s", "-r", "0-99,2000000-2099999", "-D", "-", "-o", multi, url])
                let typeLine = try #require(multipart.stdout.split(separator: "\r\n").first { $0.hasPrefix("Content-Type: ") })
                let boundary = try #require(typeLine.split(separator: "boundary=").last.map(String.init))
                var expected = Data()
                for range in [0...99, 2_000_000...2_099_999] {
                    expected += Data(
                        ("\r\n--\(boundary)\r\nContent-Type: application/octet-stream\r\n"
                            + "Content-Range: bytes \(range.lowerBound)-\(range.upperBound)/\(size)\r\n\r\n").utf8)
                    expected += Data(big[range])
                }
                expected += Data("\r\n--\(boundary)--\r\n".utf8)
                #expect(try Data(contentsOf: URL(fileURLWithPath: multi)) == expected)
                let outside = try await runCurl(["-s", "-r", "\(size)-", "-w", "%{http_code}", "-o", "/dev/null", url])
                #expect(outside.stdout == "416")
                // Overlapping ranges asking for the file many times over: it is sent once, whole.
                let overlapping = try await runCurl([
                    "-s", "-r", Array(repeating: "0-", count: 16).joined(separator: ","),
                    "-w", "%{http_code} %{size_download}", "-o", "/dev/null", url,
                ])
                #expect(overlapping.stdout == "200 \(size)")

                // HEAD: the GET's fields, no body.
                let head = try await runCurl(["-s", "-I", "-w", "%{size_download}", url])
                #expect(head.stdout.hasPrefix("HTTP/1.1 200"))
                #expect(head.stdout.contains("Content-Length: \(size)\r\n"))
                #expect(head.stdout.hasSuffix("\r\n\r\n0"))
                let lines = head.stdout.split(separator: "\r\n")
                let etag = try #require(lines.first { $0.hasPrefix("ETag: ") }).dropFirst(6)
                let lastModified = try #require(lines.first { $0.hasPrefix("Last-Modified: ") }).dropFirst(15)

                func status(_ extra: [String]) async throws -> String {
                    try await runCurl(["-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download}"] + extra + [url]).stdout
                }
                #expect(try await status(["-H", "If-None-Match: \(etag)"]) == "304 0")
                #expect(try await status(["-H", "If-None-Match: \"other\", W/\(etag)"]) == "304 0")
                #expect(try await status(["-H", "If-None-Match: \"other\""]) == "200 \(size)")
                #expect(try await status(["-H", "If-Modified-Since: \(lastModified)"]) == "304 0")
                #expect(try await status(["-H", "If-Modified-Since: Sat, 01 Jan 2000 00:00:00 GMT"]) == "200 \(size)")
                // If-Range: the range only while the validator still matches, else the whole file.
                #expect(try await status(["-r", "0-9", "-H", "If-Range: \(etag)"]) == "206 10")
                #expect(try await status(["-r", "0-9", "-H", "If-Range: \"stale\""]) == "200 \(size)")
                #expect(try await status(["-r", "0-9", "-H", "If-Range: \(lastModified)"]) == "206 10")
                #expect(try await status(["-X", "POST"]) == "405 19")
                #expect(try await status(["--path-as-is", "-X", "GET", "--url-query", "x=1", "-H", "X: y"]) == "200 \(size)")
            }
        }

        @Test func pipelinedRequestsAfterAFileBody() async throws {
            let site = try Site()
            defer { site.remove() }
            let big = site.big
            try await Self.withFileServer(site) { harness in
                let client = try await harness.connect()
                try await client.send(
                    "GET /big.bin HTTP/1.1\r\nHost: a\r\n\r\n"
                        + "GET /small.txt HTTP/1.1\r\nHost: a\r\n\r\n"
                        + "GET /big.bin HTTP/1.1\r\nHost: a\r\nRange: bytes=5000-400000\r\n\r\n"
                        + "HEAD /big.bin HTTP/1.1\r\nHost: a\r\n\r\n")
                let responses = try await client.readResponses(4, methods: [.get, .get, .get, .head])
                #expect(responses.map(\.status) == [200, 200, 206, 200])
                #expect(responses.first?.body == big)
                #expect(responses.dropFirst().first?.bodyText == "small file\n")
                #expect(responses.dropFirst(2).first?.body == Array(big[5000...400000]))
                // The connection stays open for the next one.
                try await client.send("GET /small.txt HTTP/1.1\r\nHost: a\r\n\r\n")
                let next = try await client.readResponses(5, methods: [.get, .get, .get, .head, .get])
                #expect(next.last?.bodyText == "small file\n")
                #expect(await client.isClosedByPeer() == false)
                await client.close()
            }
        }

        /// Requests the 256 MiB file on a client that reads nothing, so the server's send stalls with the file open.
        static func stalledDownload(_ harness: ServerHarness, site: Site) async throws -> RawClient {
            let client = try await harness.connect()
            let stream = client.stream
            try await stream.loop.submit { stream.value.setReadingEnabled(false) }
            try await client.send("GET /huge.bin HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(await eventually { Self.isOpen(site.hugePath) })
            return client
        }

        @Test func aPeerThatResetsMidTransferLeavesTheFileClosed() async throws {
            let site = try Site()
            defer { site.remove() }
            try await HTTPFileHandlerRejectionTests.warmUp()
            let before = await descriptorBaseline()
            try await Self.withFileServer(site) { harness in
                for _ in 0..<3 {
                    let client = try await Self.stalledDownload(harness, site: site)
                    let stream = client.stream
                    try await stream.loop.submit {
                        try? stream.value.socketForTesting.setOption(.linger(seconds: 0))
                        stream.value.close(error: nil)
                    }
                    // Closed while the server still runs: the reset alone releases the file.
                    #expect(await eventually { !Self.isOpen(site.hugePath) })
                }
                // And the server goes on serving.
                let small = try await runCurl(["-s", "http://127.0.0.1:\(harness.port)/small.txt"])
                #expect(small.stdout == "small file\n")
            }
            #expect(await eventually { before.newlyOpened().isEmpty })
        }

        @Test func shutdownMidTransferClosesTheFile() async throws {
            let site = try Site()
            defer { site.remove() }
            let harness = try await ServerHarness.start(handler: try HTTPFileHandler(root: site.root))
            let client = try await Self.stalledDownload(harness, site: site)
            await harness.server.shutdown(gracePeriod: .milliseconds(100))
            #expect(await eventually { !Self.isOpen(site.hugePath) })
            await client.close()
            await harness.stop()
        }

        @Test func tlsConnectionsGetTheSameBytesWithoutSendfile() async throws {
            let pki = try TestPKI.shared()
            let site = try Site()
            defer { site.remove() }
            try await Self.withFileServer(
                site,
                configure: { configuration in
                    configuration.tls = TLSServerConfiguration(certificateChainFile: pki.goodChain, privateKeyFile: pki.goodKey)
                }
            ) { harness in
                let url = "https://localhost:\(harness.port)/big.bin"
                let before = SendFileStatistics.bytesSent.load(ordering: .relaxed)
                let whole = Self.outputPath(site, "tls")
                let result = try await runCurl([
                    "-sS", "--cacert", pki.rootCertificate, "-o", whole,
                    "-w", "%{http_code} %{size_download}", url,
                ])
                #expect(result.stdout == "200 \(site.big.count)", "\(result.stderr)")
                #expect(try Self.sha256(whole) == Self.sha256(site.bigPath))
                let multi = Self.outputPath(site, "tls-multi")
                _ = try await runCurl(["-sS", "--cacert", pki.rootCertificate, "-r", "10-200009,300000-300009", "-o", multi, url])
                let bytes = try Data(contentsOf: URL(fileURLWithPath: multi))
                #expect(bytes.count > 200_010)
                #expect(bytes.range(of: Data(site.big[10...200_009])) != nil)
                // No byte of a TLS connection may leave by sendfile: it would go out unencrypted.
                #expect(SendFileStatistics.bytesSent.load(ordering: .relaxed) == before)
            }
        }
    }

    /// A handler of its own answering HEAD with `respond(_:file:)`: on TLS, where file bodies are read rather than sent
    /// by the kernel, the writer must not read a file whose every byte the response would drop.
    @Suite struct HTTPFileRegionHeadTests {
        @Test func headOverTLSReadsNoneOfTheFile() async throws {
            let pki = try TestPKI.shared()
            let site = try HTTPFileHandlerTests.Site()
            defer { site.remove() }
            let hugePath = site.hugePath
            let failures = Lock<[String]>([])
            let harness = try await ServerHarness.start(configure: { configuration in
                configuration.tls = TLSServerConfiguration(certificateChainFile: pki.goodChain, privateKeyFile: pki.goodKey)
            }) { request, response in
                let file = try RegularFile(path: hugePath)
                // Emptied once open: a writer that reads any of it fails with FileTruncatedError.
                #expect(truncate(hugePath, 0) == 0)
                defer { _ = truncate(hugePath, 256 << 20) }
                do {
                    try await response.respond(HTTPResponseHead(status: .ok), file: file.region())
                } catch {
                    failures.withLock { $0.append("\(request.method): \(error)") }
                    throw error
                }
            }
            do {
                try await withTimeout(seconds: 30) {
                    let head = try await runCurl([
                        "-sS", "-I", "--cacert", pki.rootCertificate,
                        "https://localhost:\(harness.port)/huge.bin",
                    ])
                    #expect(head.stdout.hasPrefix("HTTP/1.1 200"), "\(head.stderr)")
                    #expect(head.stdout.contains("Content-Length: \(256 << 20)\r\n"))
                }
            } catch {
                await harness.stop()
                throw error
            }
            await harness.stop()
            #expect(failures.withLock { $0 } == [])
        }
    }

    /// What `HTTPFileHandler(root:)` refuses.
    @Suite struct HTTPFileHandlerRejectionTests {
        /// Runs curl twice first: the second process watched by a termination handler makes Foundation open
        /// descriptors of its own that stay open and would otherwise count against a descriptor baseline.
        static func warmUp() async throws {
            for _ in 0..<2 { _ = try await runCurl(["--version"]) }
        }

        @Test func rootMustBeADirectory() throws {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("wire-notdir-\(UUID().uuidString)")
            try Data("x".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            #expect(throws: IOError(syscall: "realpath", errno: Errno(rawValue: ENOTDIR))) {
                try HTTPFileHandler(root: file.path)
            }
            #expect(throws: IOError(syscall: "realpath", errno: .noSuchFile)) {
                try HTTPFileHandler(root: file.path + "-missing")
            }
        }
    }
}
