import Foundation
import Testing
import Wire

extension IOSuite {
    /// The server against curl, and `wire serve` as a built binary.
    @Suite struct HTTPServerCurlTests {
        @Test func curlReusesTheKeepAliveConnection() async throws {
            try await withTimeout(seconds: 20) {
                let harness = try await ServerHarness.start(handler: EchoTestHandler())
                let base = "http://127.0.0.1:\(harness.port)"
                let result = try await runCurl(["-sv", "\(base)/one", "\(base)/two"])
                #expect(result.status == 0)
                #expect(result.stdout == "GET /one GET /two ")
                #expect(result.stderr.contains("Re-using existing connection"))
                #expect(result.stderr.contains("left intact"))
                await harness.stop()
            }
        }

        @Test func curlChunkedUpload() async throws {
            try await withTimeout(seconds: 20) {
                let harness = try await ServerHarness.start { request, response in
                    let body = try await request.body.collect(upTo: 4 << 20)
                    let sawChunked = request.headers.first(name: "transfer-encoding") == "chunked"
                    try await response.respond(
                        HTTPResponseHead(status: .ok),
                        body: ByteBuffer(
                            string: "\(sawChunked) \(body.readableBytes) \(body.readableBytesArray.reduce(0) { $0 &+ Int($1) })"))
                }
                let payload = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("wire-upload-\(UUID().uuidString)")
                try Data(payload).write(to: file)
                defer { try? FileManager.default.removeItem(at: file) }
                let result = try await runCurl([
                    "-s", "-H", "Transfer-Encoding: chunked", "--data-binary", "@\(file.path)",
                    "http://127.0.0.1:\(harness.port)/upload",
                ])
                let sum = payload.reduce(0) { $0 &+ Int($1) }
                #expect(result.stdout == "true 300000 \(sum)")
                await harness.stop()
            }
        }

        /// `wire serve` as a child process; its first line names the port.
        private static func launchWire(_ arguments: [String]) throws -> (Process, Int) {
            let binary = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build/debug/wire").path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["serve", "--port", "0", "--loops", "1"] + arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            var line: [UInt8] = []
            while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != 0x0A { line.append(byte) }
            let text = String(decoding: line, as: UTF8.self)
            guard text.hasPrefix("listening on http://"), let port = Int(text.split(separator: ":").last ?? "") else {
                process.terminate()
                throw HTTPServerError(.bindFailed, detail: "wire serve printed \(text)")
            }
            return (process, port)
        }

        private static func stopWire(_ process: Process) async -> Int32 {
            await withCheckedContinuation { continuation in
                process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
                if process.isRunning { process.interrupt() } else { continuation.resume(returning: process.terminationStatus) }
            }
        }

        @Test func wireServeRootRangesAndValidators() async throws {
            try await withTimeout(seconds: 30) {
                let root = FileManager.default.temporaryDirectory.appendingPathComponent("wire-root-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: root.appendingPathComponent("dir"), withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: root) }
                let content = (0..<1000).map { UInt8(truncatingIfNeeded: $0) }
                try Data(content).write(to: root.appendingPathComponent("data.bin"))
                try Data("<p>index</p>".utf8).write(to: root.appendingPathComponent("dir/index.html"))
                let (process, port) = try Self.launchWire(["--root", root.path])
                let base = "http://127.0.0.1:\(port)"

                let ranged = try await runCurl(["-s", "-r", "0-99", "-w", "%{http_code}", "-o", "/dev/null", "\(base)/data.bin"])
                #expect(ranged.stdout == "206")
                let rangeHeaders = try await runCurl(["-s", "-r", "0-99", "-D", "-", "-o", "/dev/null", "\(base)/data.bin"])
                #expect(rangeHeaders.stdout.contains("Content-Range: bytes 0-99/1000"))
                #expect(rangeHeaders.stdout.contains("Content-Length: 100"))
                let outside = try await runCurl([
                    "-s", "-r", "5000-6000", "-w", "%{http_code}", "-o", "/dev/null", "\(base)/data.bin",
                ])
                #expect(outside.stdout == "416")
                let index = try await runCurl(["-s", "-D", "-", "\(base)/dir/"])
                #expect(index.stdout.contains("Content-Type: text/html"))
                #expect(index.stdout.hasSuffix("<p>index</p>"))
                let traversal = try await runCurl([
                    "-s", "--path-as-is", "-w", "%{http_code}", "-o", "/dev/null", "\(base)/../../etc/passwd",
                ])
                #expect(traversal.stdout == "404")
                let encoded = try await runCurl([
                    "-s", "--path-as-is", "-w", "%{http_code}", "-o", "/dev/null", "\(base)/%2e%2e/%2e%2e/etc/passwd",
                ])
                #expect(encoded.stdout == "404")
                let head = try await runCurl(["-s", "-I", "\(base)/data.bin"])
                #expect(head.stdout.contains("Content-Length: 1000"))
                let etag = head.stdout.split(separator: "\r\n").first { $0.hasPrefix("ETag: ") }.map { String($0.dropFirst(6)) }
                let lastModified = head.stdout.split(separator: "\r\n").first { $0.hasPrefix("Last-Modified: ") }
                    .map { String($0.dropFirst(15)) }
                let notModified = try await runCurl([
                    "-s", "-H", "If-None-Match: \(etag ?? "none")", "-w", "%{http_code}", "-o", "/dev/null", "\(base)/data.bin",
                ])
                #expect(notModified.stdout == "304")
                let since = try await runCurl([
                    "-s", "-H", "If-Modified-Since: \(lastModified ?? "")", "-w", "%{http_code}", "-o", "/dev/null",
                    "\(base)/data.bin",
                ])
                #expect(since.stdout == "304")
                #expect(await Self.stopWire(process) == 0)
            }
        }

        @Test func wireServeRootAnswersHeadWithoutReadingTheFileAndRefusesFIFOs() async throws {
            // 64 GiB of holes: a HEAD that read the body would hold the loop for minutes; a FIFO opened for reading
            // would block it until a writer came.
            try await withTimeout(seconds: 30) {
                let root = FileManager.default.temporaryDirectory.appendingPathComponent("wire-root-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: root) }
                let huge = root.appendingPathComponent("huge.iso").path
                #expect(FileManager.default.createFile(atPath: huge, contents: nil))
                #expect(truncate(huge, 64 << 30) == 0)
                #expect(mkfifo(root.appendingPathComponent("pipe").path, 0o644) == 0)
                let (process, port) = try Self.launchWire(["--root", root.path])
                let base = "http://127.0.0.1:\(port)"
                let head = try await runCurl(["-s", "-I", "\(base)/huge.iso"])
                #expect(head.stdout.hasPrefix("HTTP/1.1 200"))
                #expect(head.stdout.contains("Content-Length: \(64 << 30)"))
                let fifo = try await runCurl(["-s", "-w", "%{http_code}", "-o", "/dev/null", "\(base)/pipe"])
                #expect(fifo.stdout == "404")
                let again = try await runCurl(["-s", "-I", "\(base)/huge.iso"])
                #expect(again.stdout.hasPrefix("HTTP/1.1 200"))
                #expect(await Self.stopWire(process) == 0)
            }
        }

        @Test func wireServeEchoMapsEachByteToOneCodePoint() async throws {
            // obs-text in the value (0x80, UTF-8 "é" as 0xC3 0xA9, 0xFF): each byte is U+00NN in the JSON, as in
            // wire parse and wire get --json-summary.
            try await withTimeout(seconds: 30) {
                let (process, port) = try Self.launchWire(["--echo"])
                let loop = try EventLoop(name: "echo-client")
                let client = try await RawClient.connect(port: port, loop: loop)
                try await client.send(
                    Array("GET /e HTTP/1.1\r\nHost: x\r\nX-Obs: a".utf8) + [0x80, 0x62, 0xC3, 0xA9, 0x63, 0xFF]
                        + Array("\r\n\r\n".utf8))
                let response = try #require(try await client.readResponses(1).first)
                #expect(response.bodyText.contains(#"["X-Obs","a\u0080b\u00c3\u00a9c\u00ff"]"#))
                let json = try #require(try JSONSerialization.jsonObject(with: Data(response.bodyText.utf8)) as? [String: Any])
                let headers = try #require(json["headers"] as? [[String]])
                let value = try #require(headers.first { $0.first == "X-Obs" }?.last)
                #expect(value.unicodeScalars.map { UInt8($0.value) } == [0x61, 0x80, 0x62, 0xC3, 0xA9, 0x63, 0xFF])
                await client.close()
                await loop.shutdownGracefully()
                #expect(await Self.stopWire(process) == 0)
            }
        }

        @Test func wireServeEcho() async throws {
            try await withTimeout(seconds: 30) {
                let (process, port) = try Self.launchWire(["--echo"])
                let result = try await runCurl([
                    "-s", "-H", "X-Test:  spaced", "--data-binary", "hi", "http://127.0.0.1:\(port)/e?q=1",
                ])
                let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
                #expect(json["method"] as? String == "POST")
                #expect(json["target"] as? String == "/e?q=1")
                #expect(json["version"] as? String == "HTTP/1.1")
                #expect(json["body_b64"] as? String == "aGk=")
                let headers = try #require(json["headers"] as? [[String]])
                #expect(headers.contains(["X-Test", "spaced"]))
                let head = try await runCurl(["-s", "-I", "http://127.0.0.1:\(port)/h"])
                #expect(head.stdout.contains("X-Echo: "))
                #expect(await Self.stopWire(process) == 0)
            }
        }
    }
}
