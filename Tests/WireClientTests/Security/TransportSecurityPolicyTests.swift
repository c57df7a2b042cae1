import Foundation
import Testing
import Wire
import WireClient
import WireTestSupport

/// The ATS-like transport security policy, as a decision and in a session (before any socket, and at a redirect hop).
@Suite(.sharedIO(minutes: 1))
struct TransportSecurityPolicyTests {
    static func refuses(_ policy: TransportSecurityPolicy, _ url: String) -> Bool {
        do {
            try policy.check(URL(string: url)!)
            return false
        } catch {
            return error.code == .appTransportSecurityRequiresSecureConnection && error.urlErrorCode == -1022
        }
    }

    @Test func theDefaultAllowsEverything() {
        #expect(!Self.refuses(.allowsArbitraryLoads, "http://example.org/"))
        #expect(SessionConfiguration().transportSecurity == .allowsArbitraryLoads)
    }

    @Test func cleartextIsRefusedAndHTTPSIsNot() {
        let policy = TransportSecurityPolicy.requiresSecureConnections()
        #expect(Self.refuses(policy, "http://example.org/"))
        #expect(Self.refuses(policy, "http://127.0.0.1:8080/"))
        #expect(!Self.refuses(policy, "https://example.org/"))
    }

    @Test func exceptionsMatchExactlyOrWithSubdomainsWhenAsked() {
        let policy = TransportSecurityPolicy.requiresSecureConnections(exceptionDomains: [
            "Internal.Example.org": .init(),
            "corp.example": .init(includesSubdomains: true),
            "strict.example": .init(includesSubdomains: true, allowsInsecureHTTPLoads: false),
        ])
        #expect(!Self.refuses(policy, "http://internal.example.org/"))
        #expect(!Self.refuses(policy, "http://INTERNAL.example.org./"))
        #expect(Self.refuses(policy, "http://api.internal.example.org/"))
        #expect(!Self.refuses(policy, "http://corp.example/") && !Self.refuses(policy, "http://a.b.corp.example/"))
        #expect(Self.refuses(policy, "http://notcorp.example/"))
        #expect(Self.refuses(policy, "http://strict.example/") && Self.refuses(policy, "http://x.strict.example/"))
    }

    @Test(arguments: [
        ("http://localhost:8080/", true), ("http://db.localhost/", true), ("http://printer.local/", true),
        ("http://buildbox/", true), ("http://127.0.0.1/", true), ("http://127.8.9.10/", true), ("http://10.1.2.3/", true),
        ("http://172.16.0.1/", true), ("http://172.31.255.255/", true), ("http://192.168.1.1/", true),
        ("http://169.254.0.9/", true), ("http://[::1]:8080/", true), ("http://[fe80::1]/", true), ("http://[fd12::1]/", true),
        ("http://172.32.0.1/", false), ("http://8.8.8.8/", false), ("http://example.org/", false),
        ("http://[2001:db8::1]/", false), ("http://1.2.3.4.5/", false), ("http://localhost.example.org/", false),
    ])
    func localNetworkingCoversLocalHostsOnly(url: String, local: Bool) {
        let policy = TransportSecurityPolicy.requiresSecureConnections(allowsLocalNetworking: true)
        #expect(Self.refuses(policy, url) == !local)
    }

    @Test func policiesAreCodable() throws {
        let policy = TransportSecurityPolicy.requiresSecureConnections(
            exceptionDomains: ["example.org": .init(includesSubdomains: true)], allowsLocalNetworking: true)
        let decoded = try JSONDecoder().decode(TransportSecurityPolicy.self, from: JSONEncoder().encode(policy))
        #expect(decoded == policy)
    }

    @Test func aRefusedRequestOpensNoConnectionAndARedirectHopIsChecked() async throws {
        try await LoopbackServer.with({ request, writer in
            if request.target == "/away" {
                try await writer.reply(302, headers: ["Location": "http://wire-ats-test.example/landing"])
            } else {
                try await writer.reply(200, "ok")
            }
        }) { server in
            func manager(_ policy: TransportSecurityPolicy) -> SessionManager {
                var configuration = SessionConfiguration()
                configuration.transportSecurity = policy
                let manager = SessionManager(configuration: configuration)
                manager.responseSerializer = HTTPResponseSerializer()
                return manager
            }
            let strict = manager(.requiresSecureConnections())
            await #expect(throws: ClientError(.appTransportSecurityRequiresSecureConnection)) {
                _ = try await strict.data(for: ClientRequest(url: server.url("/")))
            }
            #expect(server.requests.isEmpty, "the refused request reached the server")

            let listed = manager(.requiresSecureConnections(exceptionDomains: ["127.0.0.1": .init()]))
            let allowed = try await listed.data(for: ClientRequest(url: server.url("/")))
            #expect(allowed.response?.statusCode == 200)

            let local = manager(.requiresSecureConnections(allowsLocalNetworking: true))
            #expect(try await local.data(for: ClientRequest(url: server.url("/"))).response?.statusCode == 200)
            do {
                _ = try await local.data(for: ClientRequest(url: server.url("/away")))
                Issue.record("the redirect to a cleartext public host was followed")
            } catch let error as ClientError {
                #expect(error.code == .appTransportSecurityRequiresSecureConnection)
                #expect(error.failingURL?.host == "wire-ats-test.example")
            }
            #expect(server.requests.map(\.target) == ["/", "/", "/away"])
        }
    }
}
