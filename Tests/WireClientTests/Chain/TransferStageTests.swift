import Foundation
import Testing
import WireTestSupport
import Wire
import WireClient

/// The caller's stages in the transfer chain: application stages once per task around the whole transfer, network
/// stages around every exchange, short-circuits, and failures.
@Suite(.sharedIO(minutes: 1))
struct TransferStageTests {
    /// `/r` redirects to `/echo` and sets a cookie; `/echo` answers with the request's `Cookie` and `X-Stage`.
    static func handler(_ request: LoopbackServer.Recorded, _ writer: HTTPResponseWriter) async throws {
        if request.target == "/r" {
            try await writer.reply(302, headers: ["Location": "/echo", "Set-Cookie": "hop=1; Path=/"])
        } else {
            let cookie = request.headers.first(name: "Cookie") ?? "-"
            let stage = request.headers.first(name: "X-Stage") ?? "-"
            try await writer.reply(
                200, "\(cookie) \(stage)", headers: ["Content-Type": "text/plain", "Cache-Control": "max-age=60"])
        }
    }

    /// Records what a stage saw: the request's URL, its `Cookie`, and the status that came back.
    final class Seen: Sendable {
        let entries = Recorder<String>()
    }

    struct Observing: TransferStage {
        let seen: Seen
        let header: String?

        func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
            var request = chain.request
            if let header { request.setValue(header, forHTTPHeaderField: "X-Stage") }
            let answer = try await chain.proceed(request)
            let cookie = chain.request.value(forHTTPHeaderField: "Cookie") ?? "-"
            seen.entries.record("\(chain.request.url.path) \(cookie) \(answer.response.statusCode)")
            return answer
        }
    }

    static func manager(
        application: [any TransferStage] = [], network: [any TransferStage] = [],
        cache: Bool = false
    ) -> SessionManager {
        var configuration = SessionConfiguration.default
        configuration.httpCookieStorage = CookieStorage()
        configuration.applicationStages = application
        configuration.networkStages = network
        if cache { configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil) }
        let manager = SessionManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        return manager
    }

    @Test func anApplicationStageSeesTheTaskOnceAndANetworkStageEveryHopAsSent() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let application = Seen()
            let network = Seen()
            let manager = Self.manager(
                application: [Observing(seen: application, header: "app")],
                network: [Observing(seen: network, header: nil)])
            let result = try await manager.data(for: ClientRequest(url: server.url("/r")))
            // The application stage's field reached the server on both hops; the cookie the redirect set went out on
            // the second, below the application stage.
            #expect(String(decoding: result.data ?? Data(), as: UTF8.self) == "hop=1 app")
            #expect(application.entries.all == ["/r - 200"])
            #expect(network.entries.all == ["/r - 302", "/echo hop=1 200"])
            #expect(server.requests.map { $0.headers.first(name: "X-Stage") } == ["app", "app"])
        }
    }

    struct FieldRecorder: TransferStage {
        let fields: Recorder<String>

        func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
            fields.record(chain.request.headers.map { "\($0.name): \($0.value)" }.joined(separator: ", "))
            return try await chain.proceed(chain.request)
        }
    }

    @Test func aNetworkStageSeesTheSessionsFieldsAndAnApplicationStageTheCallersOnly() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let application = Recorder<String>()
            let network = Recorder<String>()
            var configuration = SessionConfiguration.default
            configuration.httpCookieStorage = nil
            configuration.httpAdditionalHeaders = ["X-Session": "1"]
            configuration.applicationStages = [FieldRecorder(fields: application)]
            configuration.networkStages = [FieldRecorder(fields: network)]
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            _ = try await manager.data(for: ClientRequest(url: server.url("/echo"), headers: ["X-Own": "2"]))
            #expect(application.all == ["X-Own: 2"])
            #expect(network.all == ["X-Own: 2, X-Session: 1, Accept-Encoding: gzip, deflate"])
            #expect(server.requests.first?.headers.first(name: "X-Session") == "1")
        }
    }

    @Test func aNetworkStageIsNotCalledForAnAnswerFromTheCache() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let network = Seen()
            let manager = Self.manager(network: [Observing(seen: network, header: nil)], cache: true)
            let first = try await manager.data(for: ClientRequest(url: server.url("/echo")))
            let second = try await manager.data(for: ClientRequest(url: server.url("/echo")))
            #expect(first.response?.source == .networkStored)
            #expect(second.response?.source == .cache)
            #expect(network.entries.all == ["/echo - 200"])
            #expect(server.requests.count == 1)
        }
    }

    struct Canned: TransferStage {
        func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "text/plain")
            return StageResponse(
                response: ClientResponse(url: chain.request.url, statusCode: 203, headers: headers),
                body: ResponseBody(Data("canned".utf8)), request: chain.request)
        }
    }

    @Test func aStageAnswersWithoutTheNetwork() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let manager = Self.manager(application: [Canned()])
            let task = Recorder<Int64>()
            manager.taskDidComplete = { done, _ in task.record(done.countOfBytesReceived) }
            let result = try await manager.data(for: ClientRequest(url: server.url("/echo")))
            #expect(result.response?.statusCode == 203)
            #expect(String(decoding: result.data ?? Data(), as: UTF8.self) == "canned")
            #expect(task.all == [6])
            #expect(server.requests.isEmpty)
        }
    }

    struct Reading: TransferStage {
        let bodies: Recorder<String>

        func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
            var answer = try await chain.proceed(chain.request)
            let data = try await answer.body.collect(upTo: 1 << 16)
            bodies.record(String(decoding: data, as: UTF8.self))
            return answer
        }
    }

    @Test func aStageThatReadsTheBodyKeepsItForTheTask() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let bodies = Recorder<String>()
            let manager = Self.manager(network: [Reading(bodies: bodies)])
            let result = try await manager.data(for: ClientRequest(url: server.url("/echo")))
            #expect(String(decoding: result.data ?? Data(), as: UTF8.self) == "- -")
            #expect(bodies.all == ["- -"])
        }
    }

    struct Refusing: TransferStage {
        func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
            throw ClientError(
                .appTransportSecurityRequiresSecureConnection, failingURL: chain.request.url,
                failureReason: "refused by a stage")
        }
    }

    @Test func aStageThatThrowsFailsTheTaskWithItsError() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let manager = Self.manager(network: [Refusing()])
            await #expect(throws: ClientError(.appTransportSecurityRequiresSecureConnection)) {
                _ = try await manager.data(for: ClientRequest(url: server.url("/echo")))
            }
            #expect(server.requests.isEmpty)
        }
    }
}
