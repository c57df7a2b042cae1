import Foundation
import Testing
import Wire
import WireClient
import WireTestSupport

/// `SessionConfiguration.shouldUsePipelining` against the fault engine of `wire serve --faults` holding answers back
/// (`hold`, `release`): requests pipelined on one connection arrive before the first answer goes out.
@Suite(.sharedIO(minutes: 1))
struct PipeliningTests {
    /// Holds the first two answers on a connection and sends all three once the third request is in: only a client
    /// that pipelines is answered. Each body says how many requests were in when the answers went out.
    static let holdUntilThree = """
        {"rules": [
          {"request": 0, "actions": [{"do": "hold"}, {"do": "response", "status": 200, "body": "3"}]},
          {"request": 1, "actions": [{"do": "hold"}, {"do": "response", "status": 200, "body": "3"}]},
          {"request": 2, "actions": [{"do": "release"}, {"do": "response", "status": 200, "body": "3"}]}
        ]}
        """

    /// Holds every answer until the test releases it.
    static let holdEach = """
        {"rules": [{"actions": [{"do": "hold"}, {"do": "response", "status": 200, "body": "1"}]}]}
        """

    /// A manager on one connection per host; a request the server never answers fails after 10 s (more under a
    /// sanitizer) rather than hold the test up.
    static func manager() -> SessionManager {
        rawDataManager {
            $0.shouldUsePipelining = true
            $0.httpMaximumConnectionsPerHost = 1
            $0.timeoutIntervalForRequest = .seconds(10) * Sanitizer.timeScale
        }
    }

    /// Three GETs at once on one connection; what the server said each found on arrival.
    static func threeAtOnce(_ manager: SessionManager, _ base: String, pipelining: Bool? = nil) async throws -> [String] {
        try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<3 {
                group.addTask {
                    var request = ClientRequest(url: URL(string: "\(base)/\(index)")!)
                    request.shouldUsePipelining = pipelining
                    let result = try await manager.data(for: request)
                    return String(decoding: result.data ?? Data(), as: UTF8.self)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test func aSessionThatPipelinesSendsItsRequestsBeforeTheFirstAnswer() async throws {
        try await FaultPeer.with(Self.holdUntilThree) { server async throws in
            let manager = Self.manager()
            defer { manager.invalidateSession(cancelingTasks: true) }
            let base = server.base
            #expect(try await Self.threeAtOnce(manager, base) == ["3", "3", "3"])
            #expect(try await server.connectionCount() == 1)
        }
    }

    @Test func aRequestThatSaysNoStaysOutOfThePipeline() async throws {
        try await FaultPeer.with(Self.holdEach) { server async throws in
            let manager = Self.manager()
            defer { manager.invalidateSession(cancelingTasks: true) }
            let base = server.base
            let answers = Task { try await Self.threeAtOnce(manager, base, pipelining: false) }
            for round in 1...3 {
                #expect(await eventually(within: .seconds(10)) { server.targets.count >= round })
                // The client waits for this answer before it sends its next request: none arrives meanwhile.
                let early = await eventually(within: .milliseconds(300) * Sanitizer.timeScale) { server.targets.count > round }
                #expect(!early, "\(server.targets) arrived before answer \(round) went out")
                try await server.releaseHeld()
            }
            // Each answer went out with one request in.
            #expect(try await answers.value == ["1", "1", "1"])
        }
    }

    @Test func theSettingIsOffByDefaultAndArchived() throws {
        #expect(SessionConfiguration.default.shouldUsePipelining == false)
        #expect(ResourceDownloader<Data>.defaultSessionConfiguration.shouldUsePipelining == false)
        var configuration = SessionConfiguration.default
        configuration.shouldUsePipelining = true
        let archive = try JSONEncoder().encode(configuration)
        #expect(try JSONDecoder().decode(SessionConfiguration.self, from: archive).shouldUsePipelining == true)
        let text = try #require(String(data: archive, encoding: .utf8))
        #expect(text.contains("\"shouldUsePipelining\":true") && !text.contains("httpShouldUsePipelining"))
        // An archive from before the setting had one spelling keeps its value.
        let renamed = text.replacingOccurrences(of: "\"shouldUsePipelining\"", with: "\"httpShouldUsePipelining\"")
        #expect(try JSONDecoder().decode(SessionConfiguration.self, from: Data(renamed.utf8)).shouldUsePipelining == true)
        // An archive from before the setting existed decodes with the default.
        let older = text.replacingOccurrences(of: ",\"shouldUsePipelining\":true", with: "")
            .replacingOccurrences(of: "\"shouldUsePipelining\":true,", with: "")
        #expect(!older.contains("shouldUsePipelining"))
        #expect(try JSONDecoder().decode(SessionConfiguration.self, from: Data(older.utf8)).shouldUsePipelining == false)
    }
}
