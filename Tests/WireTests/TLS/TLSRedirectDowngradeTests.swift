import Synchronization
import Testing
@_spi(Locking) import Wire
import WireTLS

extension IOSuite {
    /// A redirect from `https` to `http`: followed by default without credentials, refused when the configuration
    /// says so.
    @Suite struct TLSRedirectDowngradeTests {
        let pki: TestPKI

        init() throws {
            pki = try TestPKI.shared()
        }

        /// The heads the plaintext server received.
        final class Heads: Sendable {
            let list = Lock<[String]>([])
            func withLock<R: Sendable>(_ body: (inout [String]) -> R) -> R { list.withLock { body(&$0) } }
        }

        /// An https server redirecting every request to `plain`, a plaintext server that records the heads it gets.
        func withDowngrade(
            followsDowngrade: Bool,
            _ body: @escaping @Sendable (ClientServer, Heads) async throws -> Void
        ) async throws {
            let heads = Heads()
            let group = try EventLoopGroup(loopCount: 1)
            let plain = try await ScriptedServer.start(on: group.next()) { _, _, head in
                heads.withLock { $0.append(head) }
                return .respond(ScriptedServer.ok("plain"))
            }
            let plainURL = "http://127.0.0.1:\(plain.address.port!)/landed"
            var tls = TLSConfiguration()
            tls.trustRoots = .pemFile(pki.rootCertificate)
            var client = HTTPClientConfiguration()
            client.tls = tls
            client.followsRedirectsFromHTTPSToHTTP = followsDowngrade
            let chain = pki.goodChain
            let key = pki.goodKey
            do {
                try await ClientServer.run(
                    seconds: 20, client: client,
                    configure: { configuration in
                        configuration.tls = TLSServerConfiguration(certificateChainFile: chain, privateKeyFile: key)
                    },
                    handler: { _, response in
                        try await response.respond(
                            HTTPResponseHead(
                                status: HTTPStatus(code: 302),
                                headers: [
                                    "Location": plainURL, "Content-Length": "0",
                                ]))
                    }
                ) { pair in try await body(pair, heads) }
            } catch {
                try await plain.close()
                await group.shutdownGracefully()
                throw error
            }
            try await plain.close()
            await group.shutdownGracefully()
        }

        static func request(_ pair: ClientServer) -> HTTPClientRequest {
            var request = HTTPClientRequest(url: "https://localhost:\(pair.port)/secret")
            request.headers.add(name: "Authorization", value: "Bearer token")
            request.headers.add(name: "Cookie", value: "session=1")
            request.headers.add(name: "Proxy-Authorization", value: "Basic eDp5")
            return request
        }

        @Test func followedByDefaultWithoutCredentials() async throws {
            try await withDowngrade(followsDowngrade: true) { pair, heads in
                let response = try await pair.client.execute(Self.request(pair))
                #expect(try await response.body.collect(upTo: 100) == ByteBuffer(string: "plain"))
                let head = try #require(heads.withLock { $0.first }).lowercased()
                #expect(head.hasPrefix("get /landed "))
                #expect(!head.contains("authorization"))
                #expect(!head.contains("cookie"))
            }
        }

        @Test func refusedWhenTheConfigurationSaysSo() async throws {
            try await withDowngrade(followsDowngrade: false) { pair, heads in
                do {
                    _ = try await pair.client.execute(Self.request(pair))
                    Issue.record("the downgrade was followed")
                } catch let error as HTTPClientError {
                    #expect(error.code == .redirectRefused)
                    #expect(error.description.contains("https to http"))
                }
                #expect(heads.withLock { $0.isEmpty })
            }
        }
    }
}
