import Foundation
import Synchronization
import Testing
import Wire
import WireClient
import WireTLS

/// WireClient's sessions through tinyproxy with Basic authentication: a 407 from a forwarding proxy and from
/// `CONNECT` answered by the challenge hook or the credential storage for the proxy's protection space, preemptive
/// credentials, and the configuration's proxy archived without its secrets.
extension IOSuite {
    @Suite struct SessionProxyTests {
        typealias Origins = ProxyTransportTests.Origins

        /// A manager through `proxy` that trusts the test root for origins and hands back bodies as they are.
        static func manager(_ origins: Origins, _ proxy: ProxyConfiguration, storage: CredentialStorage? = nil)
            -> SessionManager
        {
            var configuration = SessionConfiguration.ephemeral
            var tls = TLSConfiguration()
            tls.trustRoots = .pemFile(origins.pki.rootCertificate)
            configuration.tls = tls
            configuration.proxy = proxy
            configuration.credentialStorage = storage
            configuration.timeoutIntervalForRequest = .seconds(20)
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            return manager
        }

        /// The status and body of a GET, or the error it failed with.
        static func get(_ manager: SessionManager, _ url: String) async -> Result<(Int, String), ClientError> {
            do {
                let result = try await manager.data(for: ClientRequest(url: URL(string: url)!))
                return .success((result.response?.statusCode ?? 0, String(decoding: result.data ?? Data(), as: UTF8.self)))
            } catch {
                return .failure(error)
            }
        }

        final class Challenges: Sendable {
            let seen = Mutex<[AuthenticationChallenge]>([])
            var all: [AuthenticationChallenge] { seen.withLock { $0 } }
            func record(_ challenge: AuthenticationChallenge) { seen.withLock { $0.append(challenge) } }
        }

        @Test func aForwardingProxysChallengeIsAnsweredByTheHookForTheProxysSpace() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            let proxy = try TestProxy.tinyproxy(basicAuth: ("alice", "s3cret"))
            defer { proxy.stop() }
            try await Origins.run { origins in
                let anonymous = Proxy(kind: .http, host: "127.0.0.1", port: proxy.port)
                let manager = Self.manager(origins, .proxy(anonymous))
                let challenges = Challenges()
                manager.taskDidReceiveAuthenticationChallenge = { _, challenge in
                    challenges.record(challenge)
                    return .useCredential(user: "alice", password: "s3cret")
                }
                let first = try await Self.get(manager, "http://127.0.0.1:\(origins.plainPort)/one").get()
                // The origin never sees the proxy's credentials.
                #expect(first.0 == 200 && first.1 == "origin /one -")
                let challenge = try #require(challenges.all.first)
                #expect(challenges.all.count == 1)
                #expect(challenge.protectionSpace.isProxy && challenge.scheme == "basic")
                #expect(challenge.host == "127.0.0.1" && challenge.port == proxy.port)
                #expect(challenge.protectionSpace.urlScheme == "http" && challenge.response.statusCode == 407)
                #expect(challenge.protectionSpace == ProtectionSpace(proxy: anonymous, realm: challenge.realm))
                manager.invalidateSession(cancelingTasks: true)
            }
        }

        @Test func aConnect407IsAnsweredFromTheCredentialStorageWithoutAHook() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            try await Origins.run { origins in
                let proxy = try TestProxy.tinyproxy(connectPorts: [origins.securePort], basicAuth: ("alice", "s3cret"))
                defer { proxy.stop() }
                let anonymous = Proxy(kind: .http, host: "127.0.0.1", port: proxy.port)
                let url = "https://localhost:\(origins.securePort)/in"
                // Without a credential the refused CONNECT fails the task, naming the proxy's answer.
                let refused = Self.manager(origins, .proxy(anonymous))
                guard case .failure(let error) = await Self.get(refused, url) else {
                    Issue.record("the CONNECT went through without credentials")
                    return
                }
                #expect(error.code == .cannotConnectToHost)
                let wire = try #require(error.underlying as? HTTPClientError)
                #expect(wire.code == .proxyRefused && wire.proxyResponse?.status.code == 407)
                refused.invalidateSession(cancelingTasks: true)
                // A credential stored for the origin's space is not the proxy's: only the proxy's space answers.
                let storage = CredentialStorage()
                let realm = wire.proxyResponse?.headers.first(name: "proxy-authenticate").flatMap { field in
                    field.split(separator: "\"").dropFirst().first.map(String.init)
                }
                storage.setCredential(
                    user: "alice", password: "s3cret",
                    for: ProtectionSpace(
                        host: "127.0.0.1", port: proxy.port, urlScheme: "http", authenticationMethod: "basic", realm: realm))
                let wrongSpace = Self.manager(origins, .proxy(anonymous), storage: storage)
                let wrong = await Self.get(wrongSpace, url)
                #expect((try? wrong.get()) == nil)
                wrongSpace.invalidateSession(cancelingTasks: true)
                storage.setCredential(user: "alice", password: "s3cret", for: ProtectionSpace(proxy: anonymous, realm: realm))
                let manager = Self.manager(origins, .proxy(anonymous), storage: storage)
                let answer = try await Self.get(manager, url).get()
                #expect(answer.0 == 200 && answer.1 == "origin /in -")
                // One refused CONNECT for each of the three sessions, then the one with credentials.
                #expect(proxy.connectCount == 4)
                manager.invalidateSession(cancelingTasks: true)
            }
        }

        /// tinyproxy answers a wrong password with 401, not another 407: the task fails with that answer, the hook
        /// asked once. A hook that cancels fails the task with `.cancelled` and no second CONNECT.
        @Test func aWrongPasswordFailsWithTheProxysAnswerAndTheHookMayCancel() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            try await Origins.run { origins in
                let proxy = try TestProxy.tinyproxy(connectPorts: [origins.securePort], basicAuth: ("alice", "s3cret"))
                defer { proxy.stop() }
                let anonymous = Proxy(kind: .http, host: "127.0.0.1", port: proxy.port)
                let url = "https://localhost:\(origins.securePort)/"
                let wrong = Self.manager(origins, .proxy(anonymous))
                let challenges = Challenges()
                wrong.taskDidReceiveAuthenticationChallenge = { _, challenge in
                    challenges.record(challenge)
                    return .useCredential(user: "alice", password: "wrong")
                }
                guard case .failure(let error) = await Self.get(wrong, url) else {
                    Issue.record("a wrong password opened the tunnel")
                    return
                }
                #expect(error.code == .cannotConnectToHost)
                #expect((error.underlying as? HTTPClientError)?.proxyResponse?.status.code == 401)
                #expect(challenges.all.count == 1)
                wrong.invalidateSession(cancelingTasks: true)
                let cancelling = Self.manager(origins, .proxy(anonymous))
                cancelling.taskDidReceiveAuthenticationChallenge = { _, _ in .cancel }
                guard case .failure(let cancelled) = await Self.get(cancelling, url) else {
                    Issue.record("the tunnel opened without credentials")
                    return
                }
                #expect(cancelled.code == .cancelled)
                #expect(proxy.connectCount == 3)
                cancelling.invalidateSession(cancelingTasks: true)
            }
        }

        @Test func configuredCredentialsArePreemptiveAndNoChallengeIsAsked() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            try await Origins.run { origins in
                let proxy = try TestProxy.tinyproxy(connectPorts: [origins.securePort], basicAuth: ("alice", "s3cret"))
                defer { proxy.stop() }
                let configured = try Proxy(parsing: "http://alice:s3cret@127.0.0.1:\(proxy.port)")
                let manager = Self.manager(origins, .proxy(configured))
                let challenges = Challenges()
                manager.taskDidReceiveAuthenticationChallenge = { _, challenge in
                    challenges.record(challenge)
                    return .cancel
                }
                let tunnelled = try await Self.get(manager, "https://localhost:\(origins.securePort)/t").get()
                let forwarded = try await Self.get(manager, "http://localhost:\(origins.plainPort)/f").get()
                #expect(tunnelled.0 == 200 && tunnelled.1 == "origin /t -")
                #expect(forwarded.0 == 200 && forwarded.1 == "origin /f -")
                #expect(challenges.all.isEmpty)
                manager.invalidateSession(cancelingTasks: true)
            }
        }

        @Test func theProxyIsArchivedWithoutItsSecrets() throws {
            var configuration = SessionConfiguration()
            #expect({ if case .environment = configuration.proxy { true } else { false } }())
            var proxy = try Proxy(parsing: "http://alice:s3cret@proxy.internal:3128")
            proxy.headers.add(name: "Proxy-Authorization", value: "Bearer secret-token")
            configuration.proxy = .proxy(proxy, noProxy: NoProxyList("localhost, .internal"))
            let archive = try JSONEncoder().encode(configuration)
            let text = String(decoding: archive, as: UTF8.self)
            #expect(!text.contains("s3cret") && !text.contains("alice") && !text.contains("secret-token"))
            let decoded = try JSONDecoder().decode(SessionConfiguration.self, from: archive)
            guard case .proxy(let restored, let noProxy) = decoded.proxy else {
                Issue.record("the proxy did not come back: \(decoded.proxy)")
                return
            }
            #expect(restored == Proxy(kind: .http, host: "proxy.internal", port: 3128))
            #expect(noProxy?.text == "localhost, .internal")
            configuration.proxy = .none
            let none = try JSONDecoder().decode(SessionConfiguration.self, from: JSONEncoder().encode(configuration))
            #expect({ if case .none = none.proxy { true } else { false } }())
        }
    }
}
