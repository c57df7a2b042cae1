import Foundation
import Testing

extension IOSuite {
    /// `wire request --raw` run as a process against a Python capture peer (`Resources/raw_capture.py`): bytes arrive
    /// exactly as written, with their segmenting; answers come back as verdict lines; the connection's end is named.
    @Suite struct RawRequestTests {
        static let corpus = "\(testResources)/raw-corpus"

        /// The corpus's messages, by file name.
        static let corpusFiles: [String] = {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: corpus)) ?? []
            return names.filter { $0.hasSuffix(".http") }.sorted()
        }()

        /// A running capture peer and where it listens.
        struct Peer {
            let process: TestProcess
            let url: String

            /// The next connection's record: the reads (bytes each) and how the client's side ended.
            func nextCapture() async throws -> (reads: [[UInt8]], end: String) {
                let line = try await process.firstLine()
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let reads = try #require(object["reads"] as? [String]).map(Self.bytes(hex:))
                return (reads, try #require(object["end"] as? String))
            }

            static func bytes(hex: String) -> [UInt8] {
                let digits = Array(hex.utf8)
                return stride(from: 0, to: digits.count, by: 2).map {
                    UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
                }
            }
        }

        static func withPeer(_ arguments: [String] = [], _ body: (Peer) async throws -> Void) async throws {
            let process = try TestProcess("/usr/bin/env", ["python3", "\(testResources)/raw_capture.py"] + arguments)
            defer { process.stop() }
            let first = try await process.firstLine()
            let scheme = arguments.contains("--tls") ? "https" : "http"
            let url = first == "unix" ? "http://localhost/" : "\(scheme)://127.0.0.1:\(first)/"
            try await body(Peer(process: process, url: url))
        }

        static func hex(_ text: String) -> String { Array(text.utf8).map { String(format: "%02x", $0) }.joined() }

        /// The JSON lines of a run.
        static func lines(_ run: WireToolRunner.Run) throws -> [[String: Any]] {
            try run.text.split(separator: "\n").map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
        }

        /// The offsets where writes start after a delay, from a `.segments` file (the items this corpus uses: `N`,
        /// `N@D`, `@D`, `*N@D`).
        static func delayedStarts(_ text: String, length: Int) -> [Int] {
            var starts: [Int] = []
            for line in text.split(separator: "\n") {
                let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
                for item in content.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
                    let position = item.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)[0]
                    if position.hasPrefix("*"), let size = Int(position.dropFirst()) {
                        var offset = (starts.last ?? 0) + size
                        while offset < length {
                            starts.append(offset)
                            offset += size
                        }
                    } else if let offset = Int(position), offset > 0 {
                        starts.append(offset)
                    }
                }
            }
            return starts
        }

        @Test(arguments: corpusFiles)
        func everyCorpusMessageArrivesByteForByteWithItsSegmenting(_ name: String) async throws {
            let file = "\(Self.corpus)/\(name)"
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            let segmentsFile = file.replacingOccurrences(of: ".http", with: ".segments")
            let segments = try? String(contentsOfFile: segmentsFile, encoding: .utf8)
            try await Self.withPeer { peer in
                var arguments = ["request", "--raw", file, "--half-close", "--read-timeout", "5"]
                if segments != nil { arguments += ["--segments", segmentsFile] }
                let run = try await WireToolRunner.run(arguments + [peer.url])
                let capture = try await peer.nextCapture()
                #expect(Array(capture.reads.joined()) == bytes, "\(name) changed on the way")
                #expect(capture.end == "fin")
                let last = try #require(try Self.lines(run).last)
                #expect(last["connection"] as? String == "fin")
                #expect(last["sent"] as? Int == bytes.count)
                if let segments {
                    // Each delayed write is a read of its own at the peer: the boundaries are the segments'.
                    var boundaries: [Int] = []
                    var offset = 0
                    for read in capture.reads.dropLast() {
                        offset += read.count
                        boundaries.append(offset)
                    }
                    #expect(boundaries == Self.delayedStarts(segments, length: bytes.count), "\(name)'s reads")
                    #expect(last["writes"] as? Int == boundaries.count + 1)
                }
            }
        }

        @Test func anInlineSplitAndMarksCutTheWrites() async throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("request").path
            try Data("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8).write(to: URL(fileURLWithPath: file))
            let marked = folder.appendingPathComponent("marked").path
            try Data("GET / HTTP/1.1\r\n|Host: a\r\n|\r\n".utf8).write(to: URL(fileURLWithPath: marked))
            try await Self.withPeer { peer in
                _ = try await WireToolRunner.run(
                    ["request", "--raw", file, "--split", "@10ms,4@60ms,*5@40ms", "--half-close", peer.url])
                let capture = try await peer.nextCapture()
                #expect(capture.reads.map(\.count) == [4, 5, 5, 5, 5, 3])
                _ = try await WireToolRunner.run(
                    ["request", "--raw", marked, "--mark", "|", "--delay", "60ms", "--half-close", peer.url])
                let cut = try await peer.nextCapture()
                #expect(cut.reads.map { String(decoding: $0, as: UTF8.self) } == ["GET / HTTP/1.1\r\n", "Host: a\r\n", "\r\n"])
            }
        }

        @Test func standardInputOverAUnixSocketAndOverTLS() async throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let message = "GET /x HTTP/1.1\r\nhost: a\r\nX:  y \n\r\n"
            let socket = folder.appendingPathComponent("peer.sock").path
            try await Self.withPeer(["--unix", socket]) { peer in
                let run = try await WireToolRunner.run(
                    program: WireToolRunner.executable,
                    ["request", "--raw", "-", "--unix-socket", socket, "--half-close", peer.url], input: message)
                #expect(run.status == 0, "\(run.errors)")
                #expect(Array(try await peer.nextCapture().reads.joined()) == Array(message.utf8))
            }
            let pki = try TestPKI.shared()
            try await Self.withPeer(["--tls", pki.goodChain, pki.goodKey]) { peer in
                let run = try await WireToolRunner.run(["request", "--raw", "-", "-k", "--half-close", peer.url])
                // Empty standard input: nothing to send, and the handshake still happened.
                #expect(run.status == 0, "\(run.errors)")
                let file = folder.appendingPathComponent("request").path
                try Data(message.utf8).write(to: URL(fileURLWithPath: file))
                _ = try await peer.nextCapture()
                let tls = try await WireToolRunner.run(
                    ["request", "--raw", file, "-k", "--split", "5@50ms", "--half-close", peer.url])
                #expect(tls.status == 0, "\(tls.errors)")
                let capture = try await peer.nextCapture()
                #expect(Array(capture.reads.joined()) == Array(message.utf8))
                #expect(capture.reads.first?.count == 5)
            }
        }

        @Test func malformedAnswersGetVerdictsWithTheirKindAndOffset() async throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let request = folder.appendingPathComponent("request").path
            try Data("GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8).write(
                to: URL(fileURLWithPath: request))
            let good = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nB: 2\r\nA: 1\r\nContent-Length: 5\r\n\r\nhello"
            let bad = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
            let dump = folder.appendingPathComponent("received").path
            try await Self.withPeer(["--reply", Self.hex(good + bad), "--then", "fin"]) { peer in
                let run = try await WireToolRunner.run(["request", "--raw", request, "--dump-received", dump, peer.url])
                #expect(run.status == 1)
                let lines = try Self.lines(run)
                try #require(lines.count == 4)
                #expect(lines[0]["status"] as? Int == 100)
                #expect(lines[1]["status"] as? Int == 200)
                #expect((lines[1]["fields"] as? [[String]]) == [["B", "2"], ["A", "1"], ["Content-Length", "5"]])
                #expect(lines[1]["body_size"] as? Int == 5)
                #expect(lines[1]["body_sha256"] as? String == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
                #expect(lines[1]["verdict"] as? String == "ok")
                #expect(lines[2]["verdict"] as? String == "error")
                #expect(lines[2]["error"] as? String == "invalid_chunk_size")
                #expect(lines[2]["offset"] as? Int == (good + bad).utf8.count - 4)
                #expect(lines[3]["connection"] as? String == "fin")
                #expect(Array(try Data(contentsOf: URL(fileURLWithPath: dump))) == Array((good + bad).utf8))
                _ = try await peer.nextCapture()
            }
            try await Self.withPeer(["--reply", Self.hex("HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n"), "--then", "fin"]) {
                peer in
                let run = try await WireToolRunner.run(["request", "--raw", request, peer.url])
                let lines = try Self.lines(run)
                #expect(lines.first?["error"] as? String == "bare_lf")
                #expect(lines.first?["offset"] as? Int == 15)
                _ = try await peer.nextCapture()
            }
            try await Self.withPeer(["--reply", Self.hex("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"), "--then", "fin"])
            {
                peer in
                let run = try await WireToolRunner.run(["request", "--raw", request, peer.url])
                let lines = try Self.lines(run)
                #expect(lines.first?["verdict"] as? String == "incomplete")
                #expect(lines.first?["error"] as? String == "unexpected_end_of_stream")
                _ = try await peer.nextCapture()
            }
        }

        @Test func theEndIsNamedFINRSTTimeoutOrResetSent() async throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let request = folder.appendingPathComponent("request").path
            try Data("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8).write(to: URL(fileURLWithPath: request))
            let answer = Self.hex("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            for (then, expected) in [("fin", "fin"), ("rst", "rst"), ("hold", "timeout")] {
                try await Self.withPeer(["--reply", answer, "--then", then]) { peer in
                    let started = Date()
                    let run = try await WireToolRunner.run(["request", "--raw", request, "--read-timeout", "0.5", peer.url])
                    let lines = try Self.lines(run)
                    #expect(lines.last?["connection"] as? String == expected, "--then \(then)")
                    if expected == "timeout" { #expect(Date().timeIntervalSince(started) >= 0.5) }
                    if expected != "rst" { #expect(lines.first?["status"] as? Int == 200) }
                    _ = try await peer.nextCapture()
                }
            }
            try await Self.withPeer { peer in
                let run = try await WireToolRunner.run(["request", "--raw", request, "--split", "10@50ms", "--reset", peer.url])
                #expect(try Self.lines(run).last?["connection"] as? String == "reset-sent")
                let capture = try await peer.nextCapture()
                #expect(capture.end == "rst")
                #expect(Array(capture.reads.joined()) == Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
            }
        }

        @Test func getSendsTheRequestTargetVerbatim() async throws {
            try await Self.withPeer(["--reply", Self.hex("HTTP/1.1 204 No Content\r\n\r\n"), "--then", "fin"]) { peer in
                let run = try await WireToolRunner.run(["get", "-sS", "-X", "OPTIONS", "--request-target", "*", peer.url + "a/b"])
                #expect(run.status == 0, "\(run.errors)")
                let head = String(decoding: Array(try await peer.nextCapture().reads.joined()), as: UTF8.self)
                #expect(head.hasPrefix("OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1:"))
            }
            let refused = try await WireToolRunner.run(["get", "--request-target", "/a b", "http://127.0.0.1:1/"])
            #expect(refused.status == 2)
        }

        @Test func usageMistakesExitTwo() async throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let x = folder.appendingPathComponent("x").path
            try Data("GET / HTTP/1.1\r\n\r\n".utf8).write(to: URL(fileURLWithPath: x))
            for arguments in [
                ["--raw", "x", "--split", "5,3", "http://127.0.0.1:1/"],
                ["--raw", "x", "--split", "5@fast", "http://127.0.0.1:1/"],
                ["--raw", "x", "--half-close", "--reset", "http://127.0.0.1:1/"],
                ["--raw", "x", "-H", "A: b", "http://127.0.0.1:1/"],
                ["--raw", "x", "ftp://127.0.0.1:1/"],
            ] {
                let run = try await WireToolRunner.run(["request"] + arguments.map { $0 == "x" ? x : $0 })
                #expect(run.status == 2, "\(arguments)")
            }
        }
    }
}
