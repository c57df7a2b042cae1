import Foundation
import Testing

extension IOSuite {
    /// `wire get --record`, `wire serve --record`, `wire record export-har` and `wire replay`, run as processes against
    /// a Python capture peer (`Resources/raw_capture.py`), Wire's own server, `wire get` and curl.
    @Suite struct RecordReplayTests {
        static let response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: capture\r\nX-Kind: fixed\r\n\r\nhello"

        /// A recording's lines, as JSON objects.
        static func lines(_ path: String) throws -> [[String: Any]] {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            return try text.split(separator: "\n").map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
        }

        /// Every byte of the recording's data lines in direction `dir`, in order.
        static func bytes(_ lines: [[String: Any]], dir: String) -> [UInt8] {
            lines.filter { $0["type"] as? String == "data" && $0["dir"] as? String == dir }
                .flatMap { Array(Data(base64Encoded: $0["data"] as? String ?? "") ?? Data()) }
        }

        static func mode(_ path: String) throws -> Int {
            try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }

        /// Starts `wire serve --echo --record DIRECTORY` on a free port, with the test chain as its certificate when
        /// `tls`; returns the server and its base URL.
        static func recordingServer(into directory: String, tls: Bool) async throws -> (TestProcess, base: String) {
            let pki = try TestPKI.shared()
            let server = try TestProcess(
                WireToolRunner.executable.path,
                ["serve", "--echo", "--port", "0", "--record", directory]
                    + (tls ? ["--tls-cert", pki.goodChain, "--tls-key", pki.goodKey] : []))
            let port = try #require(try await server.firstLine().split(separator: ":").last.flatMap { Int($0) })
            return (server, "\(tls ? "https" : "http")://127.0.0.1:\(port)")
        }

        /// Records `wire get` of the capture peer's fixed answer (`reply`) into `path`.
        static func record(
            _ path: String, reply: String = response, tls: Bool = false, extra: [String] = []
        ) async throws -> (lines: [[String: Any]], sent: [UInt8]) {
            let pki = try TestPKI.shared()
            var result: (lines: [[String: Any]], sent: [UInt8]) = ([], [])
            let arguments = (tls ? ["--tls", pki.goodChain, pki.goodKey] : []) + ["--reply", RawRequestTests.hex(reply)]
            try await RawRequestTests.withPeer(arguments) { peer in
                let run = try await WireToolRunner.run(
                    ["get", "-s", "--record", path] + extra + (tls ? ["--cacert", pki.rootCertificate] : []) + [peer.url])
                #expect(run.status == 0, "\(run.errors)")
                #expect(run.text == "hello")
                result = (try lines(path), Array(try await peer.nextCapture().reads.joined()))
            }
            return result
        }

        @Test(arguments: [false, true])
        func recordedBytesAreWhatThePeerSawAndTheFileIsPrivate(tls: Bool) async throws {
            try await withTimeout(seconds: 60) {
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let path = folder.appendingPathComponent("exchange.jsonl").path
                let (lines, sent) = try await Self.record(path, tls: tls)
                #expect(Self.bytes(lines, dir: "out") == sent)
                #expect(Self.bytes(lines, dir: "in") == Array(Self.response.utf8))
                let header = try #require(lines.first)
                #expect(header["type"] as? String == "header")
                #expect(header["format"] as? String == "wire-record")
                #expect(header["version"] as? Int == 1)
                #expect(header["role"] as? String == "client")
                // Times are monotonic, from the start.
                let times = lines.filter { $0["type"] as? String == "data" }.compactMap { $0["t"] as? Double }
                #expect(times.count >= 2 && times == times.sorted() && times[0] >= 0)
                let metrics = try #require(lines.first { $0["type"] as? String == "metrics" })
                #expect(metrics["status"] as? Int == 200)
                let timings = try #require(metrics["timings"] as? [String: Double])
                #expect(timings["connected"] != nil && timings["first_byte"] != nil && timings["last_byte"] != nil)
                #expect((timings["secure_connected"] != nil) == tls)
                #expect((metrics["tls"] != nil) == tls)
                #expect(try Self.mode(path) == 0o600)
                // Recorded again over the same file: replaced whole, still 0600.
                _ = try await Self.record(path, tls: tls)
                #expect(try Self.mode(path) == 0o600)
            }
        }

        @Test func rawRequestsAreRecordedWithTheirSegmentsAndEnds() async throws {
            try await withTimeout(seconds: 60) {
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let path = folder.appendingPathComponent("raw.jsonl").path
                let request = "GET /raw HTTP/1.1\r\nHost: a\r\n\r\n"
                try await RawRequestTests.withPeer(["--reply", RawRequestTests.hex(Self.response), "--then", "fin"]) { peer in
                    let run = try await WireToolRunner.run(
                        program: WireToolRunner.executable,
                        ["request", "--raw", "-", "--split", "5@20ms", "--half-close", "--record", path, peer.url],
                        input: request)
                    #expect(run.status == 0, "\(run.text) \(run.errors)")
                    let lines = try Self.lines(path)
                    let writes = lines.filter { $0["type"] as? String == "data" && $0["dir"] as? String == "out" }
                    #expect(writes.count == 2)
                    #expect(Self.bytes(lines, dir: "out") == Array(try await peer.nextCapture().reads.joined()))
                    #expect(Self.bytes(Array(writes.prefix(1)), dir: "out") == Array(request.utf8.prefix(5)))
                    #expect(Self.bytes(lines, dir: "in") == Array(Self.response.utf8))
                    // Both ends of stream: this side's half-close and the peer's FIN.
                    let ends = lines.filter { $0["type"] as? String == "end" }.compactMap { $0["dir"] as? String }
                    #expect(ends.sorted() == ["in", "out"])
                    #expect(try Self.mode(path) == 0o600)
                }
            }
        }

        @Test(arguments: [false, true])
        func theServersRecordingMirrorsTheClients(tls: Bool) async throws {
            try await withTimeout(seconds: 60) {
                let pki = try TestPKI.shared()
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let directory = folder.appendingPathComponent("connections").path
                let (server, base) = try await Self.recordingServer(into: directory, tls: tls)
                let path = folder.appendingPathComponent("client.jsonl").path
                let run = try await WireToolRunner.run(
                    ["get", "-s", "--record", path, "-d", "posted body", base + "/a", base + "/b?x=1"]
                        + (tls ? ["--cacert", pki.rootCertificate] : []))
                #expect(run.status == 0, "\(run.errors)")
                // SIGTERM: the server shuts down and writes the files of connections still open.
                server.stop()
                let files = try FileManager.default.contentsOfDirectory(atPath: directory)
                #expect(files.count == 1, "\(files)")
                let serverFile = "\(directory)/\(try #require(files.first))"
                let serverLines = try Self.lines(serverFile)
                let clientLines = try Self.lines(path)
                #expect(serverLines.first?["role"] as? String == "server")
                #expect(Self.bytes(serverLines, dir: "in") == Self.bytes(clientLines, dir: "out"))
                #expect(Self.bytes(serverLines, dir: "out") == Self.bytes(clientLines, dir: "in"))
                #expect(!Self.bytes(serverLines, dir: "in").isEmpty)
                #expect(serverLines.last?["type"] as? String == "close")
                #expect(try Self.mode(serverFile) == 0o600)
                // A metrics line per exchange, in the client's format: the bytes of each are the client's exchange's.
                let metrics = serverLines.filter { $0["type"] as? String == "metrics" }
                #expect(metrics.count == 2)
                #expect(metrics.compactMap { $0["exchange"] as? Int } == [0, 1])
                #expect(metrics.compactMap { $0["method"] as? String } == ["POST", "POST"])
                #expect(metrics.compactMap { $0["url"] as? String } == [base + "/a", base + "/b?x=1"])
                #expect(metrics.compactMap { $0["status"] as? Int } == [200, 200])
                var previous = 0.0
                for (index, line) in metrics.enumerated() {
                    let exchange = clientLines.filter { $0["exchange"] as? Int == index }
                    #expect(line["bytes_in"] as? Int == Self.bytes(exchange, dir: "out").count, "\(line)")
                    #expect(line["bytes_out"] as? Int == Self.bytes(exchange, dir: "in").count, "\(line)")
                    #expect(line["conn"] as? Int == serverLines.first?["conn"] as? Int)
                    #expect(line["remote"] as? String == serverLines.first?["remote"] as? String)
                    #expect(base.hasSuffix("//" + (line["local"] as? String ?? "")), "\(line)")
                    let t = try #require(line["t"] as? Double)
                    let timings = try #require(line["timings"] as? [String: Double])
                    let started = try #require(timings["response_started"])
                    let ended = try #require(timings["response_ended"])
                    #expect(t >= previous && started >= 0 && ended >= started, "\(line)")
                    #expect(timings["queued"] == nil && line["error"] == nil)
                    previous = t
                }
            }
        }

        /// A head that arrives in pieces is offered to the server again with each new piece (what it could not
        /// parse yet stays in the buffer): each byte is still recorded once.
        @Test func bytesTheServerReadsTwiceAreRecordedOnce() async throws {
            try await withTimeout(seconds: 60) {
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let directory = folder.appendingPathComponent("connections").path
                let (server, base) = try await Self.recordingServer(into: directory, tls: false)
                let request = "POST /split HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\nabcdef"
                let run = try await WireToolRunner.run(
                    program: WireToolRunner.executable,
                    [
                        "request", "--raw", "-", "--split", "7@30ms,25@30ms,50@30ms,55@30ms", "--half-close",
                        "--read-timeout", "2", base + "/",
                    ], input: request)
                #expect(run.status == 0, "\(run.text) \(run.errors)")
                server.stop()
                let files = try FileManager.default.contentsOfDirectory(atPath: directory)
                let lines = try Self.lines("\(directory)/\(try #require(files.first))")
                #expect(Self.bytes(lines, dir: "in") == Array(request.utf8))
                let reads = lines.filter { $0["type"] as? String == "data" && $0["dir"] as? String == "in" }
                #expect(reads.count == 5)
                #expect(lines.contains { $0["type"] as? String == "end" && $0["dir"] as? String == "in" })
            }
        }

        @Test func replayedAsAServerWireGetAndCurlGetTheRecordedBytes() async throws {
            try await withTimeout(seconds: 60) {
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let path = folder.appendingPathComponent("exchange.jsonl").path
                let (lines, _) = try await Self.record(path)
                let replay = try TestProcess(WireToolRunner.executable.path, ["replay", path, "--as-server", "--port", "0"])
                defer { replay.stop() }
                let port = try #require(try await replay.firstLine().split(separator: ":").last.flatMap { Int($0) })
                let url = "http://127.0.0.1:\(port)/other/path"
                let again = folder.appendingPathComponent("again.jsonl").path
                let run = try await WireToolRunner.run(["get", "-s", "--record", again, url])
                #expect(run.status == 0, "\(run.errors)")
                #expect(run.text == "hello")
                #expect(Self.bytes(try Self.lines(again), dir: "in") == Self.bytes(lines, dir: "in"))
                let curl = try await WireToolRunner.run(
                    program: URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "-i", "--max-time", "10", url])
                #expect(curl.status == 0, "\(curl.errors)")
                #expect(curl.output == Array(Self.response.utf8))
                // One line per connection played: all the recorded bytes went out, in the recorded one write.
                for _ in 0..<2 {
                    let line = try await replay.firstLine()
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    #expect(object["sent"] as? Int == Self.response.utf8.count, "\(line)")
                    #expect(object["writes"] as? Int == 1, "\(line)")
                }
            }
        }

        @Test func replayKeepsTheRecordedSegmentingAndTimingOrGoesFaster() async throws {
            try await withTimeout(seconds: 60) {
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                // A server's recording by hand: a request, then its answer in three writes 150 ms apart.
                func data(_ t: Double, _ dir: String, _ text: String) -> String {
                    #"{"type":"data","t":\#(t),"conn":1,"dir":"\#(dir)","data":"\#(Data(text.utf8).base64EncodedString())"}"#
                }
                let recording = [
                    #"{"type":"header","format":"wire-record","version":1,"role":"server","url":"http://127.0.0.1:1/","started_unix":0}"#,
                    data(0, "in", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"),
                    data(0.01, "out", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"),
                    data(0.16, "out", "01234"),
                    data(0.31, "out", "56789"),
                ].joined(separator: "\n")
                let path = folder.appendingPathComponent("server.jsonl").path
                try Data(recording.utf8).write(to: URL(fileURLWithPath: path))
                // From the request sent to the last byte read, on the client's own clock: the replaying server cannot
                // write its last part before the recording's 310 ms (divided by the speed) from the request it read,
                // however late the client reads. A gap between two reads bounds nothing: a first read delayed by the
                // scheduler shortens the next gap.
                var spans: [String: Double] = [:]
                for speed in ["1", "4"] {
                    let replay = try TestProcess(
                        WireToolRunner.executable.path, ["replay", path, "--as-server", "--port", "0", "--speed", speed])
                    defer { replay.stop() }
                    let port = try #require(try await replay.firstLine().split(separator: ":").last.flatMap { Int($0) })
                    let again = folder.appendingPathComponent("client-\(speed).jsonl").path
                    let run = try await WireToolRunner.run(["get", "-s", "--record", again, "http://127.0.0.1:\(port)/"])
                    #expect(run.status == 0, "\(run.errors)")
                    #expect(run.text == "0123456789")
                    let data = try Self.lines(again).filter { $0["type"] as? String == "data" }
                    let reads = data.filter { $0["dir"] as? String == "in" }
                    if speed == "1" {
                        // Each recorded write was read on its own: 150 ms pauses keep them apart.
                        #expect(reads.count == 3)
                    }
                    let sent = try #require(data.first { $0["dir"] as? String == "out" }?["t"] as? Double)
                    let last = try #require(reads.last?["t"] as? Double)
                    spans[speed] = last - sent
                }
                let realTime = try #require(spans["1"])
                let faster = try #require(spans["4"])
                #expect(realTime >= 0.30, "\(spans)")
                // Four times faster: the last part 78 ms after the request, not the recording's 310.
                #expect(faster >= 0.07 && faster < realTime / 2, "\(spans)")
            }
        }

        @Test func replayedAsAClientItReportsWhereTheAnswerDiffers() async throws {
            try await withTimeout(seconds: 60) {
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let path = folder.appendingPathComponent("exchange.jsonl").path
                let (lines, _) = try await Self.record(path)
                // The same answer: no difference, status 0.
                try await RawRequestTests.withPeer(["--reply", RawRequestTests.hex(Self.response)]) { peer in
                    let run = try await WireToolRunner.run(["replay", path, "--as-client", peer.url])
                    #expect(run.status == 0, "\(run.text) \(run.errors)")
                    let report = try RawRequestTests.lines(run)
                    #expect(report.first?["same"] as? Bool == true)
                    // The server got the recorded request, byte for byte.
                    #expect(Array(try await peer.nextCapture().reads.joined()) == Self.bytes(lines, dir: "out"))
                }
                // One field's value changed by one letter.
                let changed = Self.response.replacingOccurrences(of: "X-Kind: fixed", with: "X-Kind: fiXed")
                let offset = Array(changed.utf8).indices.first { Array(changed.utf8)[$0] != Array(Self.response.utf8)[$0] }
                try await RawRequestTests.withPeer(["--reply", RawRequestTests.hex(changed)]) { peer in
                    let run = try await WireToolRunner.run(["replay", path, "--as-client", peer.url])
                    #expect(run.status == 1, "\(run.text) \(run.errors)")
                    let report = try RawRequestTests.lines(run)
                    let first = try #require(report.first)
                    #expect(first["same"] as? Bool == false)
                    #expect(first["first_difference"] as? Int == offset)
                    #expect(first["status"] as? Int == 200 && first["recorded_status"] as? Int == 200)
                    #expect(first["body_same"] as? Bool == true)
                    let fields = try #require(first["fields"] as? [[String: Any]])
                    #expect(fields.count == 1)
                    #expect(fields.first?["name"] as? String == "x-kind")
                    #expect(fields.first?["recorded"] as? [String] == ["fixed"])
                    #expect(fields.first?["live"] as? [String] == ["fiXed"])
                    #expect(report.last?["differences"] as? Int == 1)
                }
            }
        }

        /// A HAR checker in Python, as a HAR reader would load it: `json`, then the fields HAR 1.2 requires.
        static let harCheck = #"""
            import json, re, sys
            har = json.load(open(sys.argv[1]))
            log = har["log"]
            assert log["version"] == "1.2", log["version"]
            assert isinstance(log["creator"]["name"], str) and isinstance(log["creator"]["version"], str)
            entries = log["entries"]
            assert entries, "no entries"
            for entry in entries:
                assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", entry["startedDateTime"]), entry["startedDateTime"]
                request, response, timings = entry["request"], entry["response"], entry["timings"]
                for key in ["method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"]:
                    assert key in request, key
                for key in ["status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL",
                            "headersSize", "bodySize"]:
                    assert key in response, key
                for header in request["headers"] + response["headers"]:
                    assert set(header) == {"name", "value"}, header
                assert isinstance(response["content"]["size"], int) and isinstance(response["content"]["mimeType"], str)
                assert isinstance(entry["cache"], dict)
                for key in ["send", "wait", "receive"]:
                    assert isinstance(timings[key], (int, float)) and timings[key] >= 0, (key, timings)
                for key in ["blocked", "dns", "connect", "ssl"]:
                    assert isinstance(timings[key], (int, float)) and timings[key] >= -1, (key, timings)
                if timings["ssl"] >= 0:
                    assert timings["connect"] >= timings["ssl"], timings
                total = sum(timings[key] for key in ["blocked", "dns", "connect", "send", "wait", "receive"] if timings[key] > 0)
                assert abs(entry["time"] - total) < 0.01, (entry["time"], total)
            print(json.dumps([[e["request"]["method"], e["request"]["url"], e["response"]["status"],
                               e["response"]["content"].get("text"), e["timings"]] for e in entries]))
            """#

        @Test func harExportPassesTheChecks() async throws {
            try await withTimeout(seconds: 60) {
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let path = folder.appendingPathComponent("exchange.jsonl").path
                _ = try await Self.record(path, tls: true)
                let har = folder.appendingPathComponent("out.har").path
                let export = try await WireToolRunner.run(["record", "export-har", path, "-o", har])
                #expect(export.status == 0, "\(export.errors)")
                #expect(try Self.mode(har) == 0o600)
                let script = folder.appendingPathComponent("check.py").path
                try Data(Self.harCheck.utf8).write(to: URL(fileURLWithPath: script))
                let check = try await WireToolRunner.run(program: URL(fileURLWithPath: "/usr/bin/python3"), [script, har])
                #expect(check.status == 0, "\(check.errors)")
                let entries = try #require(try JSONSerialization.jsonObject(with: Data(check.output)) as? [[Any]])
                #expect(entries.count == 1)
                let entry = try #require(entries.first)
                #expect(entry[0] as? String == "GET")
                #expect((entry[1] as? String)?.hasPrefix("https://127.0.0.1:") == true)
                #expect(entry[2] as? Int == 200)
                #expect(entry[3] as? String == "hello")
                // A new TLS connection: every phase applies.
                let timings = try #require(entry[4] as? [String: Double])
                for key in ["dns", "connect", "ssl", "blocked"] { #expect((timings[key] ?? -1) >= 0, "\(key) \(timings)") }
                // The standard output form.
                let stdout = try await WireToolRunner.run(["record", "export-har", path])
                #expect(stdout.status == 0)
                #expect(try JSONSerialization.jsonObject(with: Data(stdout.output)) is [String: Any])
            }
        }

        @Test func harExportOfAServersRecordingPassesTheChecks() async throws {
            try await withTimeout(seconds: 60) {
                let pki = try TestPKI.shared()
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let directory = folder.appendingPathComponent("connections").path
                let (server, base) = try await Self.recordingServer(into: directory, tls: true)
                let run = try await WireToolRunner.run(
                    ["get", "-s", "-o", "/dev/null", "--cacert", pki.rootCertificate, base + "/a", base + "/b?x=1"])
                #expect(run.status == 0, "\(run.errors)")
                server.stop()
                let files = try FileManager.default.contentsOfDirectory(atPath: directory)
                #expect(files.count == 1, "\(files)")
                let recording = "\(directory)/\(try #require(files.first))"
                #expect(try Self.lines(recording).first?["role"] as? String == "server")
                let script = folder.appendingPathComponent("check.py").path
                try Data(Self.harCheck.utf8).write(to: URL(fileURLWithPath: script))
                // To a file and to standard output: the same archive.
                let har = folder.appendingPathComponent("server.har").path
                let export = try await WireToolRunner.run(["record", "export-har", recording, "-o", har])
                #expect(export.status == 0, "\(export.errors)")
                let stdout = try await WireToolRunner.run(["record", "export-har", recording])
                #expect(stdout.status == 0, "\(stdout.errors)")
                #expect(stdout.output == Array(try Data(contentsOf: URL(fileURLWithPath: har))))
                let check = try await WireToolRunner.run(program: URL(fileURLWithPath: "/usr/bin/python3"), [script, har])
                #expect(check.status == 0, "\(check.errors)")
                let entries = try #require(try JSONSerialization.jsonObject(with: Data(check.output)) as? [[Any]])
                #expect(entries.count == 2)
                #expect(entries.compactMap { $0[0] as? String } == ["GET", "GET"])
                #expect(entries.compactMap { $0[1] as? String } == [base + "/a", base + "/b?x=1"])
                #expect(entries.compactMap { $0[2] as? Int } == [200, 200])
                // The echo's JSON, as text.
                #expect(entries.allSatisfy { ($0[3] as? String)?.hasPrefix("{") == true })
                for entry in entries {
                    // A server knows no connection phases; send, wait and receive come from the times of its bytes.
                    let timings = try #require(entry[4] as? [String: Double])
                    for key in ["blocked", "dns", "connect", "ssl"] { #expect(timings[key] == -1, "\(key) \(timings)") }
                    for key in ["send", "wait", "receive"] { #expect((timings[key] ?? -1) >= 0, "\(key) \(timings)") }
                }
            }
        }

        @Test func replayedAsATLSServerWireGetAndCurlGetTheRecordedBytes() async throws {
            try await withTimeout(seconds: 60) {
                let pki = try TestPKI.shared()
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let path = folder.appendingPathComponent("exchange.jsonl").path
                let (lines, _) = try await Self.record(path)
                let replay = try TestProcess(
                    WireToolRunner.executable.path,
                    ["replay", path, "--as-server", "--port", "0", "--tls-cert", pki.goodChain, "--tls-key", pki.goodKey])
                defer { replay.stop() }
                let listening = try await replay.firstLine()
                #expect(listening.hasPrefix("listening on https://"), "\(listening)")
                let port = try #require(listening.split(separator: ":").last.flatMap { Int($0) })
                let url = "https://127.0.0.1:\(port)/other/path"
                let again = folder.appendingPathComponent("again.jsonl").path
                let run = try await WireToolRunner.run(["get", "-s", "--cacert", pki.rootCertificate, "--record", again, url])
                #expect(run.status == 0, "\(run.errors)")
                #expect(run.text == "hello")
                // Above TLS, the bytes are the recorded ones.
                #expect(Self.bytes(try Self.lines(again), dir: "in") == Self.bytes(lines, dir: "in"))
                let curl = try await WireToolRunner.run(
                    program: URL(fileURLWithPath: "/usr/bin/curl"),
                    ["-s", "-i", "--max-time", "10", "--cacert", pki.rootCertificate, url])
                #expect(curl.status == 0, "\(curl.errors)")
                #expect(curl.output == Array(Self.response.utf8))
                // Without the root, curl refuses the replay's certificate: it is the one given.
                let refused = try await WireToolRunner.run(
                    program: URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "--max-time", "10", url])
                #expect(refused.status == 60, "\(refused.errors)")
            }
        }

        @Test func unreadableRecordingsAreRefusedWithTheirLine() async throws {
            try await withTimeout(seconds: 30) {
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let path = folder.appendingPathComponent("bad.jsonl").path
                try Data(#"{"type":"header","format":"wire-record","version":2,"role":"client"}"#.utf8)
                    .write(to: URL(fileURLWithPath: path))
                let run = try await WireToolRunner.run(["replay", path, "--as-client", "127.0.0.1:9"])
                #expect(run.status == 26)
                #expect(run.errors.contains("line 1: version 2"), "\(run.errors)")
                let har = try await WireToolRunner.run(["record", "export-har", path])
                #expect(har.status != 0)
            }
        }
    }
}
