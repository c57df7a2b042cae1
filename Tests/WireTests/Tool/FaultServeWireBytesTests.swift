import Foundation
import Testing
import Wire
import WireFaults

extension IOSuite {
    /// `wire serve --faults` at the byte level: what its obs-fold and bare-LF lines put on the wire (and what Wire's client makes of them), a server that
    /// stops reading while the client still sends, and a TLS handshake cut after the ClientHello, each seen by a
    /// plain socket (Python's standard library) or curl as well as by Wire's client.
    @Suite struct FaultServeWireBytesTests {
        static let scenario = """
            {"rules": [
              {"path": "/fold", "actions": [
                {"do": "status", "code": 200}, {"do": "field", "name": "X-Folded", "value": "a", "fold": ["b", "c"]},
                {"do": "field", "name": "Content-Length", "value": "2"}, {"do": "endHead"}, {"do": "body", "text": "ok"}]},
              {"path": "/bare-lf", "actions": [
                {"do": "status", "code": 200, "lineEnding": "lf"},
                {"do": "field", "name": "Content-Length", "value": "2", "lineEnding": "lf"},
                {"do": "endHead", "lineEnding": "lf"}, {"do": "body", "text": "ok"}]},
              {"path": "/upload", "when": "head", "actions": [{"do": "stopReading"}, {"do": "hang"}]}
            ]}
            """

        /// Sends one GET for `path` on a fresh connection and returns every byte the server sends until it has sent
        /// `expected` bytes or 5 s pass: the raw answer, as a socket sees it.
        static func rawAnswer(port: Int, path: String, expected: Int) async throws -> [UInt8] {
            let script = """
                import socket, sys, time
                s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
                s.sendall(("GET %s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % sys.argv[2]).encode())
                data = b""
                deadline = time.time() + 5
                while len(data) < int(sys.argv[3]) and time.time() < deadline:
                    chunk = s.recv(65536)
                    if not chunk: break
                    data += chunk
                sys.stdout.buffer.write(data)
                """
            let run = try await WireToolRunner.run(
                program: URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, "\(port)", path, "\(expected)"],
                seconds: 20)
            #expect(run.status == 0, "\(run.errors)")
            return run.output
        }

        @Test func foldedAndBareLineFeedHeadsGoOutAsWritten() async throws {
            try await withTimeout(seconds: 60) {
                try await FaultServeTests.withServer(Self.scenario) { server in
                    let port = try #require(server.base.split(separator: ":").last.flatMap { Int($0) })
                    let folded = "HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\n c\r\nContent-Length: 2\r\n\r\nok"
                    #expect(
                        try await Self.rawAnswer(port: port, path: "/fold", expected: folded.utf8.count) == Array(folded.utf8))
                    let bare = "HTTP/1.1 200 OK\nContent-Length: 2\n\nok"
                    #expect(try await Self.rawAnswer(port: port, path: "/bare-lf", expected: bare.utf8.count) == Array(bare.utf8))
                    try await FaultServeTests.withClient { client in
                        // A user agent unfolds obs-fold into one SP each (RFC 9112 §5.2), as Wire's client does by
                        // default; a bare LF it refuses, naming the rule the head broke.
                        let folded = try await client.execute(HTTPClientRequest(url: server.base + "/fold"))
                        #expect(folded.head.headers.first(name: "x-folded") == "a b c")
                        #expect(try await folded.body.collect(upTo: 10) == ByteBuffer(string: "ok"))
                        let lf = await FaultServeTests.failure(client, server.base + "/bare-lf")
                        #expect(lf?.code == .malformedResponse)
                        #expect(lf?.parseError?.kind == .bareLF, "\(String(describing: lf))")
                    }
                }
            }
        }

        @Test func aServerThatStopsReadingBacksTheClientUp() async throws {
            try await withTimeout(seconds: 60) {
                try await FaultServeTests.withServer(Self.scenario) { server in
                    let port = try #require(server.base.split(separator: ":").last.flatMap { Int($0) })
                    // Announce 256 MiB and write without blocking until the socket refuses more: the server read the
                    // head and nothing after it, so what is accepted is bounded by the two kernels' buffers.
                    let script = """
                        import select, socket, sys
                        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
                        s.sendall(b"POST /upload HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 268435456\\r\\n\\r\\n")
                        s.setblocking(False)
                        sent, block = 0, b"x" * 65536
                        # Backed up: the socket stays unwritable for half a second.
                        while sent < 268435456 and select.select([], [s], [], 0.5)[1]:
                            try:
                                sent += s.send(block)
                            except BlockingIOError:
                                pass
                        print(sent)
                        """
                    let run = try await WireToolRunner.run(
                        program: URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, "\(port)"], seconds: 30)
                    #expect(run.status == 0, "\(run.errors)")
                    let sent = try #require(Int(run.text.trimmingCharacters(in: .whitespacesAndNewlines)))
                    #expect(sent > 0)
                    #expect(sent < 64 << 20, "\(sent) bytes went into a server that stopped reading")
                }
            }
        }

        @Test(arguments: ["fin", "rst", "stall"]) func aTLSHandshakeCutAfterTheClientHello(_ then: String) async throws {
            let pki = try TestPKI.shared()
            let scenario = """
                {"rules": [{"when": "accept", "actions": [{"do": "cutHandshake", "then": "\(then)"}]}]}
                """
            try await withTimeout(seconds: 60) {
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let file = folder.appendingPathComponent("scenario.json").path
                try Data(scenario.utf8).write(to: URL(fileURLWithPath: file))
                let process = try TestProcess(
                    WireToolRunner.executable.path,
                    ["serve", "--faults", file, "--port", "0", "--tls-cert", pki.goodChain, "--tls-key", pki.goodKey])
                defer { process.stop() }
                let line = try await process.firstLine()
                let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
                // curl: an SSL connect error (35) when the server closes, a timeout (28) when it stalls.
                let run = try await WireToolRunner.run(
                    program: URL(fileURLWithPath: "/usr/bin/curl"),
                    ["-sS", "-k", "--max-time", "1", "https://127.0.0.1:\(port)/"], seconds: 20)
                #expect(run.status == (then == "stall" ? 28 : 35), "\(run.errors)")
                // `wire get`, Wire's own TLS client, the same way: curl's codes, and its handshake's words.
                let tool = try await WireToolRunner.run(["get", "-k", "--max-time", "1", "https://127.0.0.1:\(port)/"])
                #expect(tool.status == (then == "stall" ? 28 : 35), "\(tool.errors)")
            }
        }
    }
}
