import Foundation
import Testing
import Wire
import WireFaults

extension IOSuite {
    /// `wire serve --faults` run as a process, driven by Wire's client and by curl: each fault shows as the client's
    /// typed error, the bytes that arrived, or a lower bound on the time taken. And the scenario's checks.
    @Suite struct FaultServeTests {
        static let scenario = """
            {"seed": 7, "rules": [
              {"path": "/late", "actions": [{"do": "delay", "ms": 200}, {"do": "response", "status": 200, "body": "hello"}]},
              {"path": "/slow-fields", "actions": [
                {"do": "status", "code": 200}, {"do": "delay", "ms": 100}, {"do": "field", "name": "Content-Length", "value": "2"},
                {"do": "delay", "ms": 100}, {"do": "endHead"}, {"do": "body", "text": "ok"}]},
              {"path": "/trickle", "actions": [
                {"do": "trickle", "bytes": 4, "everyMs": 20, "random": true},
                {"do": "response", "status": 200, "body": "abcdefghijklmnopqrstuvwxyz"}]},
              {"path": "/truncated", "actions": [
                {"do": "head", "status": 200, "fields": [["Content-Length", "100"]]}, {"do": "body", "size": 10}, {"do": "close"}]},
              {"path": "/two-lengths", "actions": [
                {"do": "head", "status": 200, "fields": [["Content-Length", "2"], ["Content-Length", "3"]]}, {"do": "body", "text": "abc"}]},
              {"path": "/bad-chunk", "actions": [
                {"do": "head", "status": 200, "fields": [["Transfer-Encoding", "chunked"]]},
                {"do": "chunk", "text": "abc", "sizeLine": "zz"}, {"do": "lastChunk"}]},
              {"path": "/longer", "actions": [
                {"do": "head", "status": 200, "fields": [["Content-Length", "3"]]}, {"do": "body", "text": "abcEXTRA"}]},
              {"path": "/reset-at-20", "actions": [
                {"do": "cutAt", "offset": 20, "how": "rst"}, {"do": "response", "status": 200, "body": "0123456789012345678901234567890"}]},
              {"path": "/fin-at-30", "actions": [
                {"do": "cutAt", "offset": 30, "how": "fin"}, {"do": "response", "status": 200, "body": "0123456789012345678901234567890"}]},
              {"path": "/flood", "actions": [{"do": "informational", "count": 20}, {"do": "response", "status": 200, "body": "x"}]},
              {"path": "/endless", "actions": [{"do": "status", "code": 200}, {"do": "endlessHead", "everyMs": 5}]},
              {"path": "/hang", "actions": [{"do": "hang"}]}
            ]}
            """

        /// A running `wire serve --faults` and its base URL.
        struct Server {
            let process: TestProcess
            let base: String
        }

        static func withServer(
            _ scenario: String = scenario, arguments: [String] = [], _ body: (Server) async throws -> Void
        ) async throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("scenario.json").path
            try Data(scenario.utf8).write(to: URL(fileURLWithPath: file))
            let process = try TestProcess(WireToolRunner.executable.path, ["serve", "--faults", file, "--port", "0"] + arguments)
            defer { process.stop() }
            let line = try await process.firstLine()
            let port = try #require(
                line.hasPrefix("listening on http://") ? line.split(separator: ":").last.flatMap { Int($0) } : nil)
            try await body(Server(process: process, base: "http://127.0.0.1:\(port)"))
        }

        static func withClient(
            _ configure: (inout HTTPClientConfiguration) -> Void = { _ in }, _ body: (HTTPClient) async throws -> Void
        ) async throws {
            var configuration = HTTPClientConfiguration()
            configure(&configuration)
            let client = try HTTPClient(configuration: configuration)
            do {
                try await body(client)
            } catch {
                await client.shutdown()
                throw error
            }
            await client.shutdown()
        }

        /// The error a whole exchange (head and body) ends with, or nil.
        static func failure(_ client: HTTPClient, _ url: String) async -> HTTPClientError? {
            do {
                _ = try await client.execute(HTTPClientRequest(url: url)).body.collect(upTo: 1 << 20)
                return nil
            } catch {
                return error as? HTTPClientError
            }
        }

        static func curl(_ arguments: [String]) async throws -> WireToolRunner.Run {
            try await WireToolRunner.run(
                program: URL(fileURLWithPath: "/usr/bin/curl"), ["-sS", "--max-time", "10"] + arguments, seconds: 20)
        }

        @Test func delaysAndTrickledBytesArriveWholeAndNoSooner() async throws {
            try await withTimeout(seconds: 60) {
                try await Self.withServer { server in
                    try await Self.withClient { client in
                        for (path, expected, atLeast) in [
                            ("/late", "hello", 0.2), ("/slow-fields", "ok", 0.2), ("/trickle", "abcdefghijklmnopqrstuvwxyz", 0.1),
                        ] {
                            let start = ContinuousClock.now
                            let response = try await client.execute(HTTPClientRequest(url: server.base + path))
                            let body = try await response.body.collect(upTo: 1 << 20)
                            #expect(response.status.code == 200)
                            #expect(body == ByteBuffer(string: expected), "\(path)")
                            // The trickle's pieces are 1...4 bytes: at least 7 pieces for the 90 bytes, 6 waits.
                            #expect(ContinuousClock.now - start >= .milliseconds(Int(atLeast * 1000)), "\(path)")
                        }
                    }
                }
            }
        }

        @Test func misframedResponsesGiveTheClientsTypedErrors() async throws {
            try await withTimeout(seconds: 60) {
                try await Self.withServer { server in
                    try await Self.withClient { client in
                        #expect(await Self.failure(client, server.base + "/truncated")?.code == .bodyTruncated)
                        #expect(await Self.failure(client, server.base + "/two-lengths")?.code == .malformedResponse)
                        #expect(await Self.failure(client, server.base + "/bad-chunk")?.code == .malformedResponse)
                        #expect(await Self.failure(client, server.base + "/reset-at-20")?.code == .connectionReset)
                        // A head cut short by a FIN.
                        let fin = await Self.failure(client, server.base + "/fin-at-30")?.code
                        #expect(
                            fin == .connectionClosed || fin == .emptyReply || fin == .malformedResponse,
                            "\(String(describing: fin))")
                        // The flood of 1xx is skipped, the final answer read.
                        let flood = try await client.execute(HTTPClientRequest(url: server.base + "/flood"))
                        #expect(try await flood.body.collect(upTo: 10) == ByteBuffer(string: "x"))
                        // Unknown paths: 404.
                        #expect(try await client.execute(HTTPClientRequest(url: server.base + "/none")).status.code == 404)
                    }
                    try await Self.withClient({ $0.readTimeout = .milliseconds(300) }) { client in
                        let start = ContinuousClock.now
                        #expect(await Self.failure(client, server.base + "/hang")?.code == .readTimeout)
                        #expect(ContinuousClock.now - start >= .milliseconds(300))
                    }
                }
            }
        }

        @Test func curlSeesTheSameFaults() async throws {
            try await withTimeout(seconds: 60) {
                try await Self.withServer { server in
                    let truncated = try await Self.curl([server.base + "/truncated"])
                    #expect(truncated.status == 18, "\(truncated.errors)")
                    #expect(truncated.text == "abcdefghij")
                    let reset = try await Self.curl([server.base + "/reset-at-20"])
                    #expect(reset.status == 56, "\(reset.errors)")
                    let longer = try await Self.curl([server.base + "/longer"])
                    #expect(longer.text == "abc")
                    let endless = try await Self.curl(["--max-time", "1", server.base + "/endless"])
                    #expect(endless.status == 28 || endless.status == 56, "\(endless.errors)")
                    let flood = try await Self.curl([server.base + "/flood"])
                    #expect(flood.status == 0 && flood.text == "x")
                }
            }
        }

        /// One `--log-writes` line: a write of the server's.
        struct Write: Decodable, Equatable {
            var conn: Int
            var t: Double
            var bytes: Int
        }

        /// The `--log-writes` lines of writes adding up to `total` bytes: every write of an answer the client holds
        /// whole was logged before it went out.
        static func writes(of server: Server, total: Int) async throws -> [Write] {
            var writes: [Write] = []
            while writes.reduce(0, { $0 + $1.bytes }) < total {
                let line = try await server.process.nextLine()
                writes.append(try JSONDecoder().decode(Write.self, from: Data(line.utf8)))
            }
            return writes
        }

        @Test func rulesForAConnectionAndARequestOnItApplyInAcceptOrder() async throws {
            let scenario = """
                {"rules": [
                  {"connection": 0, "actions": [{"do": "response", "status": 200, "body": "zero"}]},
                  {"connection": 1, "request": 0, "actions": [{"do": "response", "status": 200, "body": "one-first"}]},
                  {"connection": 1, "request": 1, "actions": [{"do": "response", "status": 200, "body": "one-second"}]},
                  {"connection": 2, "when": "accept", "actions": [{"do": "close", "how": "rst"}]},
                  {"actions": [{"do": "response", "status": 200, "body": "other"}]}
                ]}
                """
            try await withTimeout(seconds: 60) {
                try await Self.withServer(scenario, arguments: ["--log-writes"]) { server in
                    // curl opens one connection per run, in order; two URLs in one run share one.
                    let zero = try await Self.curl([server.base + "/a"])
                    #expect(zero.status == 0 && zero.text == "zero", "\(zero.errors)")
                    let one = try await Self.curl([server.base + "/a", server.base + "/b"])
                    #expect(one.status == 0 && one.text == "one-firstone-second", "\(one.errors)")
                    // Connection 2 is reset as it is accepted, before its request is read.
                    let reset = try await Self.curl([server.base + "/a"])
                    #expect(reset.status != 0 && reset.text.isEmpty, "\(reset.status) \(reset.text)")
                    let other = try await Self.curl([server.base + "/a"])
                    #expect(other.status == 0 && other.text == "other", "\(other.errors)")
                    // Each answer is one write, logged under its connection's number; connection 2 wrote nothing.
                    let sizes = ["zero", "one-first", "one-second", "other"].map {
                        "HTTP/1.1 200 OK\r\nContent-Length: \($0.utf8.count)\r\n\r\n\($0)".utf8.count
                    }
                    let writes = try await Self.writes(of: server, total: sizes.reduce(0, +))
                    #expect(writes.map(\.conn) == [0, 1, 1, 3])
                    #expect(writes.map(\.bytes) == sizes)
                }
            }
        }

        /// The sizes of the writes of one trickled response from `wire serve --faults`, with `arguments`.
        static func trickledWrites(_ arguments: [String]) async throws -> [Int] {
            let scenario = """
                {"seed": 7, "rules": [{"actions": [
                  {"do": "trickle", "bytes": 16, "everyMs": 0, "random": true}, {"do": "response", "status": 200, "size": 300}]}]}
                """
            var sizes: [Int] = []
            try await Self.withServer(scenario, arguments: ["--log-writes"] + arguments) { server in
                let fetched = try await Self.curl([server.base + "/"])
                #expect(fetched.status == 0 && fetched.text.utf8.count == 300, "\(fetched.errors)")
                let total = "HTTP/1.1 200 OK\r\nContent-Length: 300\r\n\r\n".utf8.count + 300
                sizes = try await Self.writes(of: server, total: total).map(\.bytes)
                #expect(sizes.reduce(0, +) == total && sizes.allSatisfy { (1...16).contains($0) })
            }
            return sizes
        }

        @Test func theSeedOptionOverridesTheFilesSeedAndRepeats() async throws {
            try await withTimeout(seconds: 60) {
                let fromFile = try await Self.trickledWrites([])
                let seven = try await Self.trickledWrites(["--seed", "7"])
                let first = try await Self.trickledWrites(["--seed", "42"])
                let again = try await Self.trickledWrites(["--seed", "42"])
                let other = try await Self.trickledWrites(["--seed", "43"])
                // The file's seed and the same seed given on the command line draw the same sizes.
                #expect(fromFile == seven)
                #expect(first == again)
                #expect(first != other)
                #expect(first != fromFile)
            }
        }

        @Test func aDelayInsideABodyHoldsItsSecondHalfBack() async throws {
            let scenario = """
                {"rules": [{"path": "/pause", "actions": [
                  {"do": "head", "status": 200, "fields": [["Content-Length", "10"]]}, {"do": "body", "text": "01234"},
                  {"do": "delay", "ms": 300}, {"do": "body", "text": "56789"}]}]}
                """
            try await withTimeout(seconds: 60) {
                try await Self.withServer(scenario, arguments: ["--log-writes"]) { server in
                    let start = ContinuousClock.now
                    let fetched = try await Self.curl([server.base + "/pause"])
                    #expect(fetched.status == 0 && fetched.text == "0123456789", "\(fetched.errors)")
                    #expect(ContinuousClock.now - start >= .milliseconds(300))
                    let head = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n".utf8.count
                    let writes = try await Self.writes(of: server, total: head + 10)
                    // The head and the first half go out at once, the second half no sooner than 300 ms later.
                    #expect(writes.map(\.bytes) == [head, 5, 5])
                    #expect(writes.count == 3 && writes[2].t - writes[1].t >= 0.3, "\(writes)")
                }
            }
        }

        @Test func scenarioErrorsNameTheRuleTheActionAndTheField() throws {
            func error(_ text: String) -> FaultScenarioError? {
                do {
                    _ = try FaultScenario.parse(Array(text.utf8))
                    return nil
                } catch { return error }
            }
            let missing = error(#"{"rules": [{"actions": []}, {"actions": [{"do": "delay"}]}]}"#)
            #expect(missing?.kind == .missingField && missing?.rule == 1 && missing?.action == 0 && missing?.field == "ms")
            let unknown = error(#"{"rules": [{"actions": [{"do": "explode"}]}]}"#)
            #expect(unknown?.kind == .invalidValue && unknown?.field == "do")
            let misspelt = error(#"{"rules": [{"actions": [{"do": "delay", "ms": 1, "msec": 2}]}]}"#)
            #expect(misspelt?.kind == .unknownField && misspelt?.field == "msec")
            let type = error(#"{"rules": [{"path": 3, "actions": []}]}"#)
            #expect(type?.kind == .wrongType && type?.rule == 0 && type?.field == "path")
            let range = error(#"{"rules": [{"actions": [{"do": "trickle", "bytes": 0, "everyMs": 1}]}]}"#)
            #expect(range?.kind == .invalidValue && range?.field == "bytes")
            let cut = error(#"{"rules": [{"actions": [{"do": "cutHandshake"}]}]}"#)
            #expect(cut?.kind == .conflict && cut?.action == 0)
            let how = error(#"{"rules": [{"actions": [{"do": "close", "how": "later"}]}]}"#)
            #expect(how?.kind == .invalidValue && how?.field == "how")
            let endings = try FaultScenario.parse(
                Array(
                    #"{"rules": [{"actions": [{"do": "close", "how": "rst-after-ack"}, {"do": "cutAt", "offset": 3, "how": "fin-without-close-notify"}]}]}"#
                        .utf8))
            #expect(endings.rules[0].actions == [.close(.rstAfterAck), .cutAt(offset: 3, ending: .finWithoutCloseNotify)])
            #expect(error("[")?.kind == .invalidJSON)
            let parsed = try FaultScenario.parse(Array(Self.scenario.utf8))
            #expect(parsed.seed == 7 && parsed.rules.count == 12)
        }
    }
}
