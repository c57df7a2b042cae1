import Synchronization
import Testing
@_spi(Locking) import Wire
import WireTLS

extension IOSuite {
    /// The client's event listener over TLS: the handshake's start and end between the connect and the connection
    /// being acquired, with what it negotiated.
    @Suite struct TLSClientEventsTests {
        @Test func aTLSRequestsEventsIncludeTheHandshake() async throws {
            let pki = try TestPKI.shared()
            let events = Lock<[HTTPClientEvent]>([])
            var configuration = HTTPClientConfiguration()
            var tls = TLSConfiguration()
            tls.trustRoots = .pemFile(pki.rootCertificate)
            configuration.tls = tls
            configuration.eventListener = { event in events.withLock { $0.append(event) } }
            try await ClientServer.run(
                seconds: 20, client: configuration,
                configure: { server in
                    server.tls = TLSServerConfiguration(certificateChainFile: pki.goodChain, privateKeyFile: pki.goodKey)
                },
                handler: { _, response in
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "secure"))
                }
            ) { pair in
                let response = try await pair.client.execute(HTTPClientRequest(url: "https://localhost:\(pair.port)/tls"))
                _ = try await response.body.collect(upTo: 100)
                let all = events.withLock { $0 }
                let names = all.map { String("\($0.kind)".prefix { $0 != "(" }) }.filter {
                    !$0.hasPrefix("connectStart") && $0 != "connectEnd"
                }
                #expect(
                    names == [
                        "callStart", "dnsStart", "dnsEnd", "tlsStart", "tlsEnd", "connectionAcquired", "requestHeadSent",
                        "responseHeadReceived", "responseBodyReceived", "connectionReleased", "callEnd",
                    ])
                let tlsEnd = all.first { "\($0.kind)".hasPrefix("tlsEnd") }
                guard case .tlsEnd(.success(let info?))? = tlsEnd?.kind else {
                    Issue.record("no negotiated TLS in \(String(describing: tlsEnd))")
                    return
                }
                #expect(info.protocolVersion == "TLSv1.3")
                let lastConnect = try #require(all.lastIndex { "\($0.kind)".hasPrefix("connectEnd") })
                let tlsStart = try #require(all.firstIndex { "\($0.kind)".hasPrefix("tlsStart") })
                #expect(lastConnect < tlsStart)
            }
        }
    }
}
