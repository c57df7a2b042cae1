import Foundation
import Testing
import Wire

extension IOSuite {
    /// `wire get` and `wire request` against the Python HTTP/1.1 peer, run as a process.
    @Suite struct GetCommandPeerTests {
        /// The peer's byte pattern for `/bytes/N` and `/chunked/N`.
        static func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8($0 % 251) } }

        /// Runs `body` with a fresh peer's base URL (`http://127.0.0.1:PORT`).
        static func withPeer(_ body: (String) async throws -> Void) async throws {
            let (peer, port) = try await startPythonPeer()
            defer { peer.stop() }
            try await body("http://127.0.0.1:\(port)")
        }

        /// Parses `--json-summary` output into one dictionary per line.
        static func summaries(_ run: WireToolRunner.Run) throws -> [[String: Any]] {
            try run.text.split(separator: "\n").map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
        }

        @Test func bodyGoesToStandardOutput() async throws {
            try await Self.withPeer { base in
                let run = try await WireToolRunner.run(["get", "\(base)/bytes/1000"])
                #expect(run.status == 0)
                #expect(run.output == Self.pattern(1000))
                #expect(run.errors.isEmpty)
            }
        }

        @Test func eachOutputFilePairsWithOneURLAndTheRestGoToStandardOutput() async throws {
            try await Self.withPeer { base in
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let first = folder.appendingPathComponent("first").path
                let second = folder.appendingPathComponent("second").path
                let run = try await WireToolRunner.run([
                    "get", "-s", "-o", first, "\(base)/bytes/3000000", "-o", second, "\(base)/chunked/70000", "\(base)/bytes/7",
                ])
                #expect(run.status == 0)
                #expect(Array(try Data(contentsOf: URL(fileURLWithPath: first))) == Self.pattern(3_000_000))
                #expect(Array(try Data(contentsOf: URL(fileURLWithPath: second))) == Self.pattern(70000))
                #expect(run.output == Self.pattern(7))
            }
        }

        @Test func jsonSummaryMapsEachByteOfAFieldValueToOneCodePoint() async throws {
            // The value holds 0x80, 0xC3 0xA9 (UTF-8 "é") and 0xFF: each byte becomes U+00NN, escaped, whether or not
            // it is part of valid UTF-8, so the bytes come back exactly.
            try await Self.withPeer { base in
                let run = try await WireToolRunner.run(["get", "--json-summary", "\(base)/obstext"])
                #expect(run.status == 0)
                #expect(run.text.contains(#"["X-Obs","a\u0080b\u00c3\u00a9c\u00ff"]"#))
                #expect(run.output.allSatisfy { $0 < 0x80 })
                let headers = try #require(try Self.summaries(run).first?["headers"] as? [[String]])
                let value = try #require(headers.first { $0.first == "X-Obs" }?.last)
                #expect(value.unicodeScalars.map { UInt8($0.value) } == [0x61, 0x80, 0x62, 0xC3, 0xA9, 0x63, 0xFF])
            }
        }

        @Test func jsonSummaryShowsTheSecondRequestReusingTheConnection() async throws {
            try await Self.withPeer { base in
                let run = try await WireToolRunner.run(["get", "--json-summary", "\(base)/bytes/4", "\(base)/chunked/5"])
                #expect(run.status == 0)
                let objects = try Self.summaries(run)
                try #require(objects.count == 2)
                #expect(objects[0]["status"] as? Int == 200)
                #expect(objects[0]["version"] as? String == "HTTP/1.1")
                #expect(objects[0]["reused"] as? Bool == false)
                #expect(objects[1]["reused"] as? Bool == true)
                #expect(objects[0]["body_b64"] as? String == Data(Self.pattern(4)).base64EncodedString())
                #expect(objects[1]["body_b64"] as? String == Data(Self.pattern(5)).base64EncodedString())
                let headers = try #require(objects[0]["headers"] as? [[String]])
                #expect(headers.contains(["Content-Length", "4"]))
                let first = try #require(objects[0]["timings"] as? [String: Any])
                let second = try #require(objects[1]["timings"] as? [String: Any])
                for key in ["name_resolved", "connected", "request_sent", "first_byte", "last_byte"] {
                    #expect(first[key] is Double, "\(key)")
                }
                // A reused connection neither resolves nor connects.
                #expect(second["connected"] is NSNull)
                #expect(second["last_byte"] is Double)
            }
        }

        @Test func includeWritesTheHeadBeforeTheBody() async throws {
            try await Self.withPeer { base in
                let run = try await WireToolRunner.run(["get", "-i", "\(base)/bytes/5"])
                #expect(run.status == 0)
                #expect(run.text.hasPrefix("HTTP/1.1 200 OK\r\n"))
                #expect(run.text.contains("\r\nContent-Length: 5\r\n"))
                #expect(Array(run.output.suffix(9)) == Array("\r\n\r\n".utf8) + Self.pattern(5))
            }
        }

        @Test func verboseShowsBothHeadsAndTimingsOnStandardError() async throws {
            try await Self.withPeer { base in
                let run = try await WireToolRunner.run(["get", "-v", "\(base)/bytes/3"])
                #expect(run.status == 0)
                #expect(run.output == Self.pattern(3))
                #expect(run.errors.contains("> GET /bytes/3 HTTP/1.1\n"))
                #expect(run.errors.contains("> Host: 127.0.0.1:"))
                #expect(run.errors.contains("< HTTP/1.1 200 OK\n"))
                #expect(run.errors.contains("< Content-Length: 3\n"))
                #expect(run.errors.contains("* timings: name_resolved="))
            }
        }

        @Test func verboseWithLShowsEveryHopsHeadsAsSent() async throws {
            try await Self.withPeer { base in
                let run = try await WireToolRunner.run(["get", "-v", "-L", "-d", "x=1", "\(base)/redirect/1/302"])
                #expect(run.status == 0)
                let lines = run.errors.split(separator: "\n").map(String.init)
                let sent = lines.filter { $0.hasPrefix("> ") && $0.contains("HTTP/1.1") }
                // The POST, then the GET that 302 turned it into, each exactly as written.
                #expect(sent == ["> POST /redirect/1/302 HTTP/1.1", "> GET /redirect/0/302 HTTP/1.1", "> GET /echo HTTP/1.1"])
                #expect(lines.contains("> Content-Length: 3"))
                #expect(lines.contains("> Content-Type: application/x-www-form-urlencoded"))
                #expect(lines.filter { $0.hasPrefix("< HTTP/1.1 302") }.count == 2)
                #expect(lines.filter { $0.hasPrefix("* following the redirect from ") }.count == 2)
                #expect(lines.contains("< HTTP/1.1 200 OK"))
            }
        }

        @Test func failTurnsAnHTTPErrorIntoStatus22WithoutBody() async throws {
            try await Self.withPeer { base in
                let run = try await WireToolRunner.run(["get", "--fail", "\(base)/status/404"])
                #expect(run.status == 22)
                #expect(run.output.isEmpty)
                #expect(run.errors == "wire: (22) the requested URL returned error: 404 Not Found\n")
                let without = try await WireToolRunner.run(["get", "\(base)/status/404"])
                #expect(without.status == 0)
            }
        }

        @Test func theStatusIsTheLastFailureAndLaterURLsStillRun() async throws {
            try await Self.withPeer { base in
                let run = try await WireToolRunner.run([
                    "get", "-f", "\(base)/status/500", "\(base)/bytes/2", "http://127.0.0.1:1/",
                ])
                #expect(run.status == 7)
                #expect(run.output == Self.pattern(2))
                #expect(run.errors.split(separator: "\n").count == 2)
            }
        }

        @Test func redirectsAreFollowedOnlyWithL() async throws {
            try await Self.withPeer { base in
                let plain = try await WireToolRunner.run(["get", "\(base)/redirect/3/302"])
                #expect(plain.status == 0)
                #expect(plain.text == "moved")
                let followed = try await WireToolRunner.run(["get", "-L", "--json-summary", "\(base)/redirect/3/302"])
                #expect(followed.status == 0)
                let summary = try #require(try Self.summaries(followed).first)
                #expect(summary["status"] as? Int == 200)
                #expect((summary["headers"] as? [[String]])?.contains(["X-Method", "GET"]) == true)
                let limited = try await WireToolRunner.run(["get", "-L", "--max-redirs", "1", "\(base)/redirect/3/302"])
                #expect(limited.status == 47)
                #expect(limited.errors.hasPrefix("wire: (47) too many redirects"))
            }
        }

        @Test func includeWithLocationShowsEveryHopsHeadAsCurlDoes() async throws {
            try await Self.withPeer { base in
                let run = try await WireToolRunner.run(["get", "-i", "-L", "\(base)/redirect/2/302"])
                #expect(run.status == 0)
                let statusLines = run.text.split(separator: "\r\n").filter { $0.hasPrefix("HTTP/1.") }
                #expect(statusLines.count == 4, "\(statusLines)")  // /redirect/2 → /1 → /0 → /echo
                #expect(statusLines.first?.contains(" 302") == true && statusLines.last?.contains(" 200") == true)
                #expect(!run.text.contains("moved"), "a redirect body was written")
                let head = try await WireToolRunner.run(["get", "-I", "-L", "\(base)/redirect/1/301"])
                #expect(head.text.split(separator: "\r\n").filter { $0.hasPrefix("HTTP/1.") }.count == 3)
            }
        }

        @Test func dataBinaryFileIsUploadedAndEchoed() async throws {
            try await Self.withPeer { base in
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let upload = folder.appendingPathComponent("upload.bin")
                let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
                try Data(bytes).write(to: upload)
                let run = try await WireToolRunner.run([
                    "request", "-X", "PUT", "--data-binary", "@\(upload.path)", "\(base)/echo",
                ])
                #expect(run.status == 0)
                #expect(run.output == bytes)
                let form = try await WireToolRunner.run(["get", "-d", "a=1", "-d", "b=2", "-i", "\(base)/echo"])
                #expect(form.text.contains("X-Method: POST\r\n"))
                #expect(form.text.hasSuffix("\r\n\r\na=1&b=2"))
            }
        }

        @Test func writeFailureIsStatus23() async throws {
            try await Self.withPeer { base in
                let run = try await WireToolRunner.run(["get", "-o", "/nonexistent/dir/x", "\(base)/bytes/5"])
                #expect(run.status == 23)
                #expect(run.errors.hasPrefix("wire: (23) cannot create /nonexistent/dir/x: "))
            }
        }

        @Test func refusedConnectionIsStatus7() async throws {
            let run = try await WireToolRunner.run(["get", "http://127.0.0.1:1/"])
            #expect(run.status == 7)
            #expect(run.errors.hasPrefix("wire: (7) connection to 127.0.0.1 port 1 refused ("))
        }

        @Test func unknownHostIsStatus6() async throws {
            // `.invalid` never resolves (RFC 6761 §6.4), and the resolver here says so at once.
            let run = try await WireToolRunner.run(["get", "--connect-timeout", "5", "http://wire-test.invalid/"])
            #expect(run.status == 6)
            #expect(run.errors.hasPrefix("wire: (6) could not resolve host wire-test.invalid"))
        }

        @Test(arguments: ["http://[::1/", "http://exa mple/", "http://"])
        func malformedURLIsStatus3(url: String) async throws {
            // -g: the URL parser's refusal (without it, `[::1/` is already a malformed glob, as in curl).
            let run = try await WireToolRunner.run(["get", "-g", url])
            #expect(run.status == 3)
            #expect(run.errors.hasPrefix("wire: (3) malformed URL"))
        }

        @Test func usageErrorIsStatus2() async throws {
            let run = try await WireToolRunner.run(["get", "--no-such-option", "http://127.0.0.1:1/"])
            #expect(run.status == 2)
            #expect(run.errors.hasPrefix("wire: (2) unknown option '--no-such-option'"))
        }

        @Test func maxTimeEndsATransferToASilentServerWithStatus28() async throws {
            // A listener that never accepts: the kernel completes the handshake and takes the request, and no
            // answer ever comes.
            let listener = try Socket.makeStream(family: .ipv4)
            try listener.bind(to: SocketAddress(ipAddress: "127.0.0.1", port: 0))
            try listener.listen(backlog: 8)
            let port = try #require(try listener.localAddress().port)
            defer { try? listener.close() }
            let started = ContinuousClock.now
            let run = try await WireToolRunner.run(["get", "--max-time", "0.5", "http://127.0.0.1:\(port)/"], seconds: 10)
            #expect(run.status == 28)
            #expect(run.errors.hasPrefix("wire: (28) operation timed out"))
            #expect(ContinuousClock.now - started < .seconds(5))
        }
    }
}
