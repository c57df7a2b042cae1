import Foundation
import Testing
import Wire
import WireTLS

/// Pinning, resumption, mutual TLS and hostile peers, Wire client against Wire server (or a
/// peer that stalls or speaks no TLS).
extension IOSuite {
    @Suite struct TLSSecurityTests {
        let pki: TestPKI

        init() throws {
            pki = try TestPKI.shared()
        }
        var harness: TLSClientServerTests { TLSClientServerTests(pki: pki) }

        func pins() throws -> (leaf: String, intermediate: String, root: String) {
            let chain = try Certificate.load(pemFile: pki.goodChain)
            let root = try Certificate.load(pemFile: pki.rootCertificate)
            return (chain[0].pin, chain[1].pin, root[0].pin)
        }

        @Test func publicKeyPinsMatchAnyCertificateOfTheVerifiedChain() async throws {
            let pins = try pins()
            for pin in [pins.leaf, pins.intermediate, pins.root] {
                var tls = harness.trustingTestRoot()
                tls.pinning = .publicKey([pin])
                try await harness.withServer(chain: pki.goodChain, key: pki.goodKey, client: tls) { pair in
                    #expect(await TLSClientServerTests.tlsError(pair) == nil)
                }
            }
            var wrong = harness.trustingTestRoot()
            wrong.pinning = .publicKey(["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="])
            try await harness.withServer(chain: pki.goodChain, key: pki.goodKey, client: wrong) { pair in
                let error = try #require(await TLSClientServerTests.tlsError(pair))
                #expect(error.reason == .pinMismatch)
                #expect(error.pins == [pins.leaf, pins.intermediate, pins.root])
                #expect(error.description.contains(pins.intermediate))
            }
        }

        @Test func certificatePinsAndTheUnverifiedCase() async throws {
            let chain = try Certificate.load(pemFile: pki.goodChain)
            var tls = harness.trustingTestRoot()
            tls.pinning = .certificate([chain[1].der])
            try await harness.withServer(chain: pki.goodChain, key: pki.goodKey, client: tls) { pair in
                #expect(await TLSClientServerTests.tlsError(pair) == nil)
            }
            // Verification off: the intermediate the peer sent proves nothing, only the leaf counts.
            var unverified = TLSConfiguration()
            unverified.certificateVerification = .none
            unverified.pinning = .publicKey([chain[1].pin])
            try await harness.withServer(chain: pki.goodChain, key: pki.goodKey, client: unverified) { pair in
                let error = try #require(await TLSClientServerTests.tlsError(pair))
                #expect(error.reason == .pinMismatch)
                #expect(error.pins == [chain[0].pin])
            }
            unverified.pinning = .publicKey([chain[0].pin])
            try await harness.withServer(chain: pki.goodChain, key: pki.goodKey, client: unverified) { pair in
                #expect(await TLSClientServerTests.tlsError(pair) == nil)
            }
        }

        @Test func trustHookSeesChainsAndVerdictAndMayRefuse() async throws {
            var tls = TLSConfiguration()
            tls.certificateVerification = .none
            tls.trustEvaluation = { context in
                guard context.verdict?.reason == .unknownIssuer, context.peerChain.count == 2, context.host == "localhost" else {
                    return .refuse("unexpected context: \(String(describing: context.verdict)) \(context.peerChain.count)")
                }
                return .refuse("not today")
            }
            try await harness.withServer(chain: pki.goodChain, key: pki.goodKey, client: tls) { pair in
                let error = try #require(await TLSClientServerTests.tlsError(pair))
                #expect(error.reason == .trustRefused)
                #expect(error.detail.contains("not today"), "\(error)")
            }
        }

        @Test(arguments: [TLSVersion.tls12, .tls13])
        func secondConnectionResumesTheSession(_ version: TLSVersion) async throws {
            var tls = harness.trustingTestRoot()
            tls.maximumVersion = version
            try await harness.withServer(chain: pki.goodChain, key: pki.goodKey, client: tls) { pair in
                var resumed: [Bool] = []
                var versions: [String] = []
                for _ in 0..<2 {
                    // `Connection: close`: the second request needs a new connection.
                    var headers = HTTPHeaders()
                    headers.add(name: "Connection", value: "close")
                    let response = try await pair.client.execute(
                        HTTPClientRequest(url: "https://localhost:\(pair.port)/", headers: headers))
                    _ = try await response.body.collect(upTo: 1 << 20)
                    let info = try #require(response.metrics.snapshot.transportSecurity)
                    resumed.append(info.isSessionResumed)
                    versions.append(info.protocolVersion)
                }
                #expect(resumed == [false, true])
                #expect(versions == [version.description, version.description])
            }
        }

        @Test(arguments: [TLSVersion.tls12, .tls13])
        func mutualTLS(_ version: TLSVersion) async throws {
            var withCertificate = harness.trustingTestRoot()
            withCertificate.maximumVersion = version
            withCertificate.certificateChainFile = pki.clientChain
            withCertificate.privateKeyFile = pki.clientKey
            let clientCAs = pki.clientCAs
            try await harness.withServer(
                chain: pki.goodChain, key: pki.goodKey, client: withCertificate,
                configureServer: { $0.clientCertificates = .required(caFile: clientCAs) }
            ) { pair in
                #expect(await TLSClientServerTests.tlsError(pair, path: "/client") == nil)
            }
            var without = harness.trustingTestRoot()
            without.maximumVersion = version
            try await harness.withServer(
                chain: pki.goodChain, key: pki.goodKey, client: without,
                configureServer: { $0.clientCertificates = .required(caFile: clientCAs) }
            ) { pair in
                let error = try #require(await TLSClientServerTests.tlsError(pair))
                #expect(error.reason == .alertReceived, "\(error)")
                // TLS 1.3 has an alert of its own for it; TLS 1.2 servers say handshake failure.
                #expect(error.alert == (version == .tls13 ? "certificate required" : "handshake failure"), "\(error)")
            }
        }

        @Test func unloadableClientCertificateIsALocalCertificateError() async throws {
            var tls = harness.trustingTestRoot()
            tls.certificateChainFile = pki.path("missing.pem")
            tls.privateKeyFile = pki.clientKey
            try await harness.withServer(chain: pki.goodChain, key: pki.goodKey, client: tls) { pair in
                let error = try #require(await TLSClientServerTests.tlsError(pair))
                #expect(error.reason == .localCertificate)
                #expect(error.detail.contains("missing.pem"))
            }
            var mismatched = harness.trustingTestRoot()
            mismatched.certificateChainFile = pki.clientChain
            mismatched.privateKeyFile = pki.goodKey
            try await harness.withServer(chain: pki.goodChain, key: pki.goodKey, client: mismatched) { pair in
                #expect(await TLSClientServerTests.tlsError(pair)?.reason == .localCertificate)
            }
        }

        @Test func serverWithUnloadableCertificateDoesNotStart() async throws {
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "tls-bad-cert")
            var configuration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
            configuration.tls = TLSServerConfiguration(certificateChainFile: pki.goodChain, privateKeyFile: pki.clientKey)
            let server = HTTPServer(configuration: configuration, group: group) { _, _ in }
            await #expect(throws: HTTPServerError.self) { _ = try await server.start() }
            await server.shutdown()
            await group.shutdownGracefully()
        }

        @Test func versionBoundsThatDoNotMeetFail() async throws {
            var tls = harness.trustingTestRoot()
            tls.minimumVersion = .tls13
            try await harness.withServer(
                chain: pki.goodChain, key: pki.goodKey, client: tls,
                configureServer: { $0.maximumVersion = .tls12 }
            ) { pair in
                #expect(await TLSClientServerTests.tlsError(pair)?.reason == .protocolVersion)
            }
        }

        @Test func largeBodiesBothWaysWithBackPressure() async throws {
            var clientConfiguration = HTTPClientConfiguration()
            clientConfiguration.tls = harness.trustingTestRoot()
            let size = 8 << 20
            try await ClientServer.run(
                seconds: 60, client: clientConfiguration,
                configure: { configuration in
                    configuration.tls = TLSServerConfiguration(
                        certificateChainFile: pki.goodChain,
                        privateKeyFile: pki.goodKey)
                },
                handler: { request, response in
                    var received = 0
                    for try await chunk in request.body { received += chunk.readableBytes }
                    try await response.writeHead(HTTPResponseHead(status: .ok, headers: ["content-length": "\(received)"]))
                    var sent = 0
                    while sent < received {
                        let count = min(64 * 1024, received - sent)
                        try await response.write(ByteBuffer(bytes: repeatElement(UInt8(sent / 65536 % 251), count: count)))
                        sent += count
                    }
                    try await response.end()
                }
            ) { pair in
                let upload = ByteBuffer(bytes: (0..<size).map { UInt8(truncatingIfNeeded: $0 % 253) })
                let response = try await pair.client.execute(
                    HTTPClientRequest(
                        url: "https://localhost:\(pair.port)/", method: .post,
                        body: .bytes(upload)))
                var total = 0
                for try await chunk in response.body { total += chunk.readableBytes }
                #expect(total == size)
            }
        }
    }
}
