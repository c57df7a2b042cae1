import Foundation
import Synchronization
import Testing
import Wire
import WireTLS

extension IOSuite {
    /// `.segments` bodies: bytes and whole files in order, the files sent by the kernel on a plain connection and
    /// read and encrypted under TLS, a file that changed size refused, `pause` awaited before each piece.
    @Suite struct HTTPClientSegmentsBodyTests {
        /// How many times a body's `pause` was awaited.
        final class Pauses: Sendable {
            let count = Atomic<Int>(0)
        }

        /// Answers with the body it received.
        static let echo: @Sendable (HTTPServerRequest, HTTPResponseWriter) async throws -> Void = { request, response in
            let body = try await request.body.collect(upTo: 64 << 20)
            try await response.respond(HTTPResponseHead(status: .ok), body: body)
        }

        /// A file of `size` patterned bytes in a fresh folder, and its contents.
        static func file(size: Int) throws -> (path: String, bytes: [UInt8]) {
            let folder = try WireToolRunner.temporaryFolder()
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
            let path = folder.appendingPathComponent("part.bin").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return (path, bytes)
        }

        /// A body of a head, a file longer than one region (4 MiB), and a tail; the calls of its `pause`.
        static func body(_ path: String, size: Int, pauses: Pauses) -> HTTPClientRequest.Body {
            .segments(
                [.bytes(ByteBuffer(string: "head|")), .file(path: path, size: size), .bytes(ByteBuffer(string: "|tail"))],
                pause: { pauses.count.add(1, ordering: .relaxed) })
        }

        @Test func aPlainConnectionSendsTheFileWithSendfile() async throws {
            let size = 5 << 20 | 123
            let (path, bytes) = try Self.file(size: size)
            defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
            try await ClientServer.run(seconds: 30, handler: Self.echo) { pair in
                let pauses = Pauses()
                let before = SendFileStatistics.bytesSent.load(ordering: .relaxed)
                let request = HTTPClientRequest(
                    url: "http://127.0.0.1:\(pair.port)/up", method: .post,
                    body: Self.body(path, size: size, pauses: pauses))
                let response = try await pair.client.execute(request)
                let echoed = try await response.body.collect(upTo: 64 << 20)
                #expect(echoed.readableBytesArray == Array("head|".utf8) + bytes + Array("|tail".utf8))
                // The server's own sends use no sendfile here: every counted byte is the client's file.
                #expect(SendFileStatistics.bytesSent.load(ordering: .relaxed) - before >= size)
                // Once per bytes piece and once per region (two for 5 MiB).
                #expect(pauses.count.load(ordering: .relaxed) == 4)
                // Replayable: the same body again on the kept-alive connection.
                let again = try await pair.client.execute(
                    HTTPClientRequest(
                        url: "http://127.0.0.1:\(pair.port)/up", method: .post,
                        body: Self.body(path, size: size, pauses: pauses)))
                #expect(try await again.body.collect(upTo: 64 << 20).readableBytes == size + 10)
            }
        }

        @Test func aTLSConnectionReadsAndEncryptsTheFile() async throws {
            let pki = try TestPKI.shared()
            let size = 1 << 20 | 77
            let (path, bytes) = try Self.file(size: size)
            defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
            var client = HTTPClientConfiguration()
            client.tls = TLSClientServerTests(pki: pki).trustingTestRoot()
            try await ClientServer.run(
                seconds: 30, client: client,
                configure: { configuration in
                    configuration.tls = TLSServerConfiguration(certificateChainFile: pki.goodChain, privateKeyFile: pki.goodKey)
                }, handler: Self.echo
            ) { pair in
                let pauses = Pauses()
                let request = HTTPClientRequest(
                    url: "https://localhost:\(pair.port)/up", method: .post,
                    body: Self.body(path, size: size, pauses: pauses))
                let response = try await pair.client.execute(request)
                let echoed = try await response.body.collect(upTo: 64 << 20)
                #expect(echoed.readableBytesArray == Array("head|".utf8) + bytes + Array("|tail".utf8))
            }
        }

        @Test func aFileOfAnotherSizeFailsTheRequest() async throws {
            let (path, _) = try Self.file(size: 1000)
            defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
            try await ClientServer.run(seconds: 30, handler: Self.echo) { pair in
                let request = HTTPClientRequest(
                    url: "http://127.0.0.1:\(pair.port)/up", method: .post,
                    body: .segments([.file(path: path, size: 999)]))
                await #expect {
                    _ = try await pair.client.execute(request)
                } throws: { error in
                    (error as? HTTPClientError)?.detail.contains("has 1000 bytes, 999 were declared") == true
                }
            }
        }
    }
}
