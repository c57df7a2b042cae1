import Foundation
import Testing
import Wire
import WireClient
import WireTestSupport

/// `SessionConfiguration.shouldUsePipelining` against a raw Python server that counts the request heads that
/// reached it before it wrote its first answer: requests pipelined on one connection arrive together.
@Suite(.sharedIO(minutes: 1))
struct PipeliningTests {
    /// Answers nothing until three request heads have arrived on a connection or 3 s (more under a sanitizer) have
    /// passed since its first one, then answers every head with the number of heads that had arrived by then.
    static let script = """
        import socket, threading, time
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        print(listener.getsockname()[1], flush=True)

        def serve(connection):
            connection.settimeout(0.02)
            received, first, early, answered = b"", None, None, 0
            while True:
                try:
                    data = connection.recv(65536)
                    if not data:
                        return
                    received += data
                except socket.timeout:
                    pass
                heads = received.count(b"\\r\\n\\r\\n")
                if heads and first is None:
                    first = time.monotonic()
                if early is None and heads and (heads >= 3 or time.monotonic() - first > \(3 * Sanitizer.timeScale)):
                    early = heads
                while early is not None and answered < heads:
                    body = str(early).encode()
                    connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body) + body)
                    answered += 1

        while True:
            connection, _ = listener.accept()
            threading.Thread(target=serve, args=(connection,), daemon=True).start()
        """

    static func withServer(_ body: (String) async throws -> Void) async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try script.write(toFile: folder + "/server.py", atomically: true, encoding: .utf8)
        let (process, port) = try await PythonPeer.start(script: folder + "/server.py", folder: folder)
        defer { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        try await body("http://127.0.0.1:\(port)")
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
        try await Self.withServer { base async throws in
            let manager = rawDataManager {
                $0.shouldUsePipelining = true
                $0.httpMaximumConnectionsPerHost = 1
            }
            defer { manager.invalidateSession(cancelingTasks: true) }
            #expect(try await Self.threeAtOnce(manager, base) == ["3", "3", "3"])
        }
    }

    @Test func aRequestThatSaysNoStaysOutOfThePipeline() async throws {
        try await Self.withServer { base async throws in
            let manager = rawDataManager {
                $0.shouldUsePipelining = true
                $0.httpMaximumConnectionsPerHost = 1
            }
            defer { manager.invalidateSession(cancelingTasks: true) }
            // The server waits its 3 s for heads that never come, then answers one request at a time.
            #expect(try await Self.threeAtOnce(manager, base, pipelining: false) == ["1", "1", "1"])
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
