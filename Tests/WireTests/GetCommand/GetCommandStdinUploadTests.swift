import Foundation
import Testing

extension IOSuite {
    /// `-T -` streams standard input chunked, as curl 7.88 does: the same head fields, the same framing, each piece
    /// sent as it is read.
    @Suite struct GetCommandStdinUploadTests {
        /// What `Resources/stream_peer.py` saw.
        struct Report: Decodable {
            var head: String
            var raw: String
            var body: String
            var streamed: Bool

            /// The head's field lines, sorted (Wire writes its framing field after `Expect`, curl before), with
            /// curl's `User-Agent` written as Wire's and `Host` without the port (each run has its own peer).
            var fields: [String] {
                head.components(separatedBy: "\r\n").dropFirst().filter { !$0.isEmpty }
                    .map { $0.hasPrefix("User-Agent: curl/") ? "User-Agent: Wire/0.1" : $0 }
                    .map { $0.hasPrefix("Host: ") ? "Host: 127.0.0.1" : $0 }.sorted()
            }
        }

        /// Runs `program` (with `words` before `-T - URL`) reading its standard input from the peer's named pipe,
        /// into which the peer writes "first part\n", and the rest only once that has arrived.
        static func streamed(_ program: String, _ words: [String]) async throws -> Report {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let fifo = folder.appendingPathComponent("input").path
            let peer = try TestProcess(
                "/usr/bin/env", ["python3", "\(testResources)/stream_peer.py", fifo, "first part\n", "and the rest"])
            defer { peer.stop() }
            let port = try await peer.firstLine()
            let run = try await WireToolRunner.run(
                program: URL(fileURLWithPath: "/bin/sh"),
                ["-c", #"exec "$0" "$@" -T - "http://127.0.0.1:$PORT/up" < "$FIFO""#, program] + words,
                environment: ["PORT": port, "FIFO": fifo])
            #expect(run.status == 0, "\(run.errors)")
            // The peer writes its report before it answers, so it is there once the client is done.
            return try JSONDecoder().decode(Report.self, from: Data(try await peer.firstLine().utf8))
        }

        @Test func standardInputIsStreamedChunkedAsCurlStreamsIt() async throws {
            let wire = try await Self.streamed(WireToolRunner.executable.path, ["get", "-s"])
            // The first piece reached the server while the rest was not yet written.
            #expect(wire.streamed)
            #expect(wire.body == "first part\nand the rest")
            #expect(wire.raw == "b\r\nfirst part\n\r\nc\r\nand the rest\r\n0\r\n\r\n")
            #expect(wire.head.hasPrefix("PUT /up HTTP/1.1\r\n"))
            #expect(wire.fields.contains("Transfer-Encoding: chunked") && wire.fields.contains("Expect: 100-continue"))
            #expect(!wire.head.lowercased().contains("content-length"))
            let curl = try await Self.streamed("/usr/bin/curl", ["-s"])
            #expect(curl.streamed)
            #expect(wire.fields == curl.fields)
            #expect(wire.raw == curl.raw)
        }

        @Test func emptyAndWholeInputsAreSentAsCurlSendsThem() async throws {
            try await CurlPeer.with { peer, _ in
                for input in ["", "one piece of input, already whole"] {
                    for words in [["-T", "-"], ["-T", "."]] {
                        let url = peer.url("/put?body=ok")
                        let wire = try await WireToolRunner.run(
                            program: WireToolRunner.executable, ["get", "-s"] + words + [url], input: input)
                        #expect(wire.status == 0, "\(wire.errors)")
                        let curl = try await WireToolRunner.run(program: CurlPeer.curl, ["-s"] + words + [url], input: input)
                        #expect(curl.status == 0)
                        let requests = try await peer.requests().map { request in
                            let parts = request.components(separatedBy: "\r\n\r\n")
                            let fields = parts[0].components(separatedBy: "\r\n")
                                .map { $0.hasPrefix("User-Agent: curl/") ? "User-Agent: Wire/0.1" : $0 }
                            return ([fields[0]] + fields.dropFirst().sorted(), parts.dropFirst().joined(separator: "\r\n\r\n"))
                        }
                        #expect(requests.count == 2)
                        #expect(requests.first?.0 == requests.last?.0, "\(words) \(input)")
                        #expect(requests.first?.1 == requests.last?.1, "\(words) \(input)")
                        #expect(requests.first?.0.contains("Transfer-Encoding: chunked") == true)
                        let chunked =
                            input.isEmpty ? "0\r\n\r\n" : String(input.utf8.count, radix: 16) + "\r\n\(input)\r\n0\r\n\r\n"
                        #expect(requests.first?.1 == chunked)
                    }
                }
            }
        }

        @Test func http10HasNoChunkedCodingAndFailsAsCurl() async throws {
            try await CurlPeer.with { peer, _ in
                let words = ["--http1.0", "-T", "-", peer.url("/put")]
                let wire = try await WireToolRunner.run(program: WireToolRunner.executable, ["get"] + words, input: "data")
                let curl = try await WireToolRunner.run(program: CurlPeer.curl, words, input: "data")
                #expect(wire.status == 25 && curl.status == 25)
                #expect(wire.errors == "wire: (25) Chunky upload is not supported by HTTP 1.0\n")
                #expect(curl.errors.contains("curl: (25) Chunky upload is not supported by HTTP 1.0"))
                // Neither sends a request.
                #expect(try await peer.requests().isEmpty)
            }
        }
    }
}
