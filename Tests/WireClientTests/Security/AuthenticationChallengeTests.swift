import Foundation
import Testing
import Wire
import WireClient
import WireTestSupport

/// 401 challenges answered through the hook and the credential store, against Wire's server.
@Suite(.sharedIO(minutes: 1))
struct AuthenticationChallengeTests {
    static let good = "Basic " + Data("alice:s3cret".utf8).base64EncodedString()

    /// `/basic` wants alice's Basic credentials; everything else answers 200.
    static func handler(_ request: LoopbackServer.Recorded, _ writer: HTTPResponseWriter) async throws {
        if request.target == "/basic", request.headers.first(name: "Authorization") != good {
            try await writer.reply(
                401, "who are you", headers: ["WWW-Authenticate": #"Basic realm="wire \"tests\"", charset="UTF-8""#])
        } else {
            try await writer.reply(200, "welcome")
        }
    }

    static func status(_ manager: SessionManager, _ url: URL) async -> Int? {
        do {
            return try await manager.data(for: ClientRequest(url: url)).response?.statusCode
        } catch {
            if error.code == .cancelled { return -999 }
            return error.response?.statusCode
        }
    }

    @Test func withoutAHookThe401IsDelivered() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            #expect(await Self.status(rawDataManager(), server.url("/basic")) == 401)
            #expect(server.requests.count == 1)
        }
    }

    @Test func aCredentialFromTheHookIsSentAndTheChallengeDescribed() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let manager = rawDataManager()
            let seen = Recorder<AuthenticationChallenge>()
            manager.taskDidReceiveAuthenticationChallenge = { _, challenge in
                seen.record(challenge)
                return .useCredential(user: "alice", password: "s3cret")
            }
            #expect(await Self.status(manager, server.url("/basic")) == 200)
            #expect(server.requests.map { $0.headers.first(name: "Authorization") } == [nil, Self.good])
            let challenge = try #require(seen.all.first)
            #expect(seen.all.count == 1)
            #expect(challenge.scheme == "basic" && challenge.realm == #"wire "tests""# && challenge.host == "127.0.0.1")
            #expect(challenge.port == server.url("/").port && challenge.previousFailureCount == 0)
            #expect(challenge.response.statusCode == 401 && !challenge.protectionSpace.isProxy)
        }
    }

    @Test func aRefusedCredentialIsNotSentTwice() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let manager = rawDataManager()
            let counts = Recorder<Int>()
            manager.taskDidReceiveAuthenticationChallenge = { _, challenge in
                counts.record(challenge.previousFailureCount)
                return .useCredential(user: "alice", password: "wrong")
            }
            #expect(await Self.status(manager, server.url("/basic")) == 401)
            #expect(counts.all == [0, 1])
            #expect(server.requests.count == 2, "the refused credential was sent again")
        }
    }

    @Test func defaultHandlingUsesTheCredentialStorage() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let storage = CredentialStorage()
            let url = server.url("/basic")
            storage.setCredential(
                user: "alice", password: "s3cret",
                for: ProtectionSpace(
                    host: "127.0.0.1", port: url.port!, urlScheme: "http", authenticationMethod: "Basic", realm: #"wire "tests""#)
            )
            let manager = rawDataManager { $0.credentialStorage = storage }
            manager.taskDidReceiveAuthenticationChallenge = { _, _ in .performDefaultHandling }
            #expect(await Self.status(manager, url) == 200)

            let empty = rawDataManager { $0.credentialStorage = CredentialStorage() }
            empty.taskDidReceiveAuthenticationChallenge = { _, _ in .performDefaultHandling }
            #expect(await Self.status(empty, url) == 401)
        }
    }

    @Test func cancelFailsTheTaskAndRejectingDeliversThe401() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let cancelling = rawDataManager()
            cancelling.taskDidReceiveAuthenticationChallenge = { _, _ in .cancel }
            #expect(await Self.status(cancelling, server.url("/basic")) == -999)
            let rejecting = rawDataManager()
            rejecting.taskDidReceiveAuthenticationChallenge = { _, _ in .rejectProtectionSpace }
            #expect(await Self.status(rejecting, server.url("/basic")) == 401)
            #expect(server.requests.count == 2)
        }
    }

    @Test func anAuthorizationOfAnySchemeIsSentAsGiven() async throws {
        try await LoopbackServer.with({ request, writer in
            if request.headers.first(name: "Authorization") == "Bearer t0ken" {
                try await writer.reply(200, "ok")
            } else {
                // `realm=` inside another parameter's quoted value, or ending another name, is not the realm.
                try await writer.reply(
                    401, headers: ["WWW-Authenticate": #"Bearer error="invalid realm=evil", xrealm=no, realm=api"#])
            }
        }) { server in
            let manager = rawDataManager()
            let realms = Recorder<String?>()
            manager.taskDidReceiveAuthenticationChallenge = { _, challenge in
                realms.record(challenge.realm)
                return challenge.scheme == "bearer" ? .useAuthorization("Bearer t0ken") : .rejectProtectionSpace
            }
            #expect(await Self.status(manager, server.url("/api")) == 200)
            #expect(realms.all == ["api"])
        }
    }
}
