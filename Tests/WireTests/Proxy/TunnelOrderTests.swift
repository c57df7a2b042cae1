import Foundation
import Testing
import Wire
import WireTLS

extension IOSuite {
    /// RFC 9110 §9.3.6: a client sends nothing of the tunnelled protocol (no TLS ClientHello, no request, no body)
    /// before the proxy's 2xx answer to `CONNECT`. A slow proxy holds its answer and counts what came meanwhile.
    @Suite struct TunnelOrderTests {
        typealias Origins = ProxyTransportTests.Origins

        @Test func nothingOfTheTunnelledProtocolIsSentBeforeTheProxysAnswer() async throws {
            let proxy = try await TestProxy.slowConnect(hold: 0.3)
            defer { proxy.stop() }
            try await Origins.run { origins in
                let client = try origins.client(.proxy(Proxy(kind: .http, host: "127.0.0.1", port: proxy.port))) {
                    $0.tunnelsThroughHTTPProxy = true
                }
                // TLS to the origin, and plain HTTP tunnelled as curl's -p does, a POST with its body in memory.
                let (status, body, _) = try await ProxyTransportTests.get(client, "https://localhost:\(origins.securePort)/s")
                #expect(status == 200 && body == "origin /s -")
                var post = HTTPClientRequest(url: "http://localhost:\(origins.plainPort)/p", method: .post)
                post.body = .bytes(ByteBuffer(string: "a body that must wait for the tunnel"))
                let response = try await client.execute(post)
                #expect(response.status.code == 200)
                _ = try await response.body.collect(upTo: 1024)
                #expect(
                    proxy.records == ["localhost:\(origins.securePort) 0", "localhost:\(origins.plainPort) 0"])
                await client.shutdown()
            }
        }
    }
}
