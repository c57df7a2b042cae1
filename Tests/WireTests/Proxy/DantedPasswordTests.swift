import Foundation
import Testing
import Wire
import WireTLS

extension IOSuite {
    /// SOCKS 5 with a user name and password (RFC 1929) through danted, whose `username` method checks a system user
    /// (`TestProxy.dantedUser`), beside curl.
    @Suite struct DantedPasswordTests {
        typealias Origins = ProxyTransportTests.Origins

        @Test func socks5WithAPasswordThroughDanted() async throws {
            if let reason = TestProxy.dantedWithPasswordMissing { return print("skipped: \(reason)") }
            let proxy = try TestProxy.dantedWithPassword()
            defer { proxy.stop() }
            let user = TestProxy.dantedUser
            try await Origins.run { origins in
                func client(_ kind: Proxy.Kind, _ credentials: ProxyCredentials?) throws -> HTTPClient {
                    try origins.client(.proxy(Proxy(kind: kind, host: "127.0.0.1", port: proxy.port, credentials: credentials)))
                }
                let good = try client(.socks5h, ProxyCredentials(user: user.user, password: user.password))
                let (status, body, metrics) = try await ProxyTransportTests.get(good, "https://localhost:\(origins.securePort)/d")
                #expect(status == 200 && body == "origin /d -")
                #expect(metrics.proxyHandshake != nil)
                let local = try client(.socks5, ProxyCredentials(user: user.user, password: user.password))
                let (plainStatus, _, _) = try await ProxyTransportTests.get(local, "http://localhost:\(origins.plainPort)/")
                #expect(plainStatus == 200)
                let wrong = try client(.socks5h, ProxyCredentials(user: user.user, password: "nope"))
                let refused = try #require(await ProxyTransportTests.failure(wrong, "http://localhost:\(origins.plainPort)/"))
                #expect(refused.code == .proxyHandshakeFailed, "\(refused)")
                if case .authenticationFailed = refused.socksError {} else { Issue.record("\(refused)") }
                let none = try client(.socks5h, nil)
                let noMethod = try #require(await ProxyTransportTests.failure(none, "http://localhost:\(origins.plainPort)/"))
                #expect(noMethod.socksError == .noAcceptableAuthenticationMethod, "\(noMethod)")
                for client in [good, local, wrong, none] { await client.shutdown() }
                // The tool and curl agree: 0 with the password, 97 without the right one.
                let url = "http://127.0.0.1:\(origins.plainPort)/"
                for (credentials, expected) in [("\(user.user):\(user.password)", Int32(0)), ("\(user.user):nope", 97)] {
                    let words = [
                        "-sS", "-o", "/dev/null", "--socks5-hostname", "127.0.0.1:\(proxy.port)", "-U", credentials, url,
                    ]
                    let curl = try await WireToolRunner.run(program: URL(fileURLWithPath: "/usr/bin/curl"), words)
                    let wire = try await WireToolRunner.run(["get"] + words)
                    #expect(curl.status == expected && wire.status == expected, "\(curl.errors) \(wire.errors)")
                }
            }
        }
    }
}
