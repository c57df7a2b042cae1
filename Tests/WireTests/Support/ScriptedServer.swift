import Wire
import WireFaults

/// The client tests' fault server, written as a script in Swift: each request's answer is chosen in code from its
/// connection, its number and its head, and played by `FaultServer`, the engine of `wire serve --faults`, so the
/// tests and the tool are one implementation. Runs on a Wire loop, on loopback or a Unix socket.
struct ScriptedServer: Sendable {
    /// What to do with one request: each is a rule of fault actions (`rule(for:head:)`).
    enum Reply: Sendable {
        case respond(String)
        case respondAndClose(String)
        /// Ends the server's side without a word.
        case close
        case reset
        /// Answers nothing; the next request is still read.
        case silence
        /// Hold this response back (a pipelining test: the client must send more first).
        case queue(String)
        /// Send every held-back response and then this one, in one write.
        case flush(String)
        /// Send every held-back response, then end the stream.
        case flushAndClose
        /// Answer once the head and the first body bytes are in, without waiting for the rest
        /// of the body, and read nothing more: a server refusing an upload (413, 401) while the
        /// client is still sending it, so the client's writes back up.
        case respondBeforeBody(String)
    }

    /// The script: connection number and request number on that connection (both from 0), and
    /// the request head as text.
    typealias Script = @Sendable (_ connection: Int, _ request: Int, _ head: String) -> Reply

    private let server: FaultServer
    var address: SocketAddress { server.address }

    static func start(
        on loop: EventLoop, address: SocketAddress = try! SocketAddress(ipAddress: "127.0.0.1", port: 0),
        script: @escaping Script
    ) async throws -> ScriptedServer {
        let server = try await FaultServer.start(FaultScenario(rules: []), on: loop, address: address) {
            connection, request, head in
            rule(for: script(connection, request, head), head: head)
        }
        return ScriptedServer(server: server)
    }

    /// The fault rule a reply is played as.
    static func rule(for reply: Reply, head: String) -> FaultRule {
        var when = FaultRule.Trigger.request
        let actions: [FaultAction]
        switch reply {
        case .respond(let text): actions = [.write(Array(text.utf8))]
        case .respondAndClose(let text): actions = [.write(Array(text.utf8)), .close(.fin)]
        case .close: actions = [.close(.fin)]
        case .reset: actions = [.close(.rst)]
        case .silence: actions = []
        case .queue(let text): actions = [.hold, .write(Array(text.utf8))]
        case .flush(let text): actions = [.hold, .write(Array(text.utf8)), .release]
        case .flushAndClose: actions = [.release, .close(.fin)]
        case .respondBeforeBody(let text):
            when = .body
            actions = [.write(Array(text.utf8)), .stopReading]
        }
        // A head asking `Expect: 100-continue` is answered before its body, as a server that refuses it would: the
        // client then must not send the body at all.
        if head.lowercased().contains("\r\nexpect: 100-continue") { when = .head }
        return FaultRule(when: when, actions: actions)
    }

    /// Connections accepted so far.
    func connectionCount() async throws -> Int { try await server.connectionCount() }

    /// Sends every held-back response on every connection.
    func flushQueued() async throws { try await server.releaseHeld() }

    /// The responses held back now, over every connection: a test flushes once its requests have arrived.
    func queuedCount() async throws -> Int { try await server.heldCount() }

    /// The most requests one connection found in a single read: above 1, the client pipelined.
    func maxRequestsPerRead() async throws -> Int { try await server.maxRequestsPerRead() }

    /// Closes every connection accepted so far and keeps listening: a server's idle timeout.
    func closeConnections() async throws { try await server.closeConnections() }

    /// Stops listening and closes every connection.
    func close() async throws { try await server.close() }

    /// A response with a Content-Length body.
    static func ok(_ body: String = "ok", extraHeaders: String = "") -> String {
        "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\(extraHeaders)\r\n\(body)"
    }
}
