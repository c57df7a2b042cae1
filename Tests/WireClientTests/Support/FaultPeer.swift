import Foundation
import Wire
import WireFaults

/// A hostile server for the session tests: `FaultServer`, the engine of `wire serve --faults`, playing a JSON scenario
/// on 127.0.0.1, port 0, on a loop of its own, so the tests and the tool are one implementation. Records the target of
/// every request head it reads.
struct FaultPeer: Sendable {
    /// Answers with ten of a thousand announced bytes, then nothing more (`/stallMidBody`, `/stall`, `/body`); never
    /// answers at all (`/head`, `/hang*`); answers `/held` only when released (`releaseHeld()`); `/busy` gets 503;
    /// anything else `{"ok":true}` as JSON.
    static let stalls = """
        {"rules": [
          {"path": "/stallMidBody", "actions": [
            {"do": "head", "status": 200, "fields": [["Content-Length", "1000"]]}, {"do": "body", "size": 10}, {"do": "hang"}]},
          {"path": "/stall", "actions": [
            {"do": "head", "status": 200, "fields": [["Content-Length", "1000"]]}, {"do": "body", "size": 10}, {"do": "hang"}]},
          {"path": "/body", "actions": [
            {"do": "head", "status": 200, "fields": [["Content-Length", "1000"]]}, {"do": "body", "size": 10}, {"do": "hang"}]},
          {"path": "/head", "actions": [{"do": "hang"}]},
          {"path": "/held", "actions": [{"do": "hold"}, {"do": "response", "status": 200, "body": "late"}]},
          {"path": "/hang*", "actions": [{"do": "hang"}]},
          {"path": "/busy", "actions": [{"do": "response", "status": 503, "body": "busy"}]},
          {"path": "*", "actions": [
            {"do": "response", "status": 200, "fields": [["Content-Type", "application/json"]], "body": "{\\"ok\\":true}"}]}
        ]}
        """

    let server: FaultServer
    let loop: EventLoop
    private let heads: Recorder<String>

    /// Starts `scenario` (JSON, as `wire serve --faults` reads it).
    static func start(_ scenario: String = stalls) async throws -> FaultPeer {
        let parsed = try FaultScenario.parse(Array(scenario.utf8))
        let loop = try EventLoop(name: "fault-peer")
        let heads = Recorder<String>()
        do {
            let server = try await FaultServer.start(
                parsed, on: loop, address: try SocketAddress(ipAddress: "127.0.0.1", port: 0),
                script: { _, _, head in
                    let requestLine = head.split(separator: "\r\n", maxSplits: 1).first ?? ""
                    let parts = requestLine.split(separator: " ")
                    heads.record(parts.count > 1 ? String(parts[1]) : "")
                    // The scenario's rules answer.
                    return nil
                })
            return FaultPeer(server: server, loop: loop, heads: heads)
        } catch {
            await loop.shutdownGracefully()
            throw error
        }
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(server.address.port!)\(path)")! }

    /// `http://127.0.0.1:<port>`.
    var base: String { "http://127.0.0.1:\(server.address.port!)" }

    /// Connections accepted so far.
    func connectionCount() async throws -> Int { try await server.connectionCount() }

    /// Sends every answer held back (`hold`) on every open connection.
    func releaseHeld() async throws { try await server.releaseHeld() }

    /// Closes every connection accepted so far and keeps listening.
    func closeConnections() async throws { try await server.closeConnections() }

    /// The targets of the request heads read so far, in order.
    var targets: [String] { heads.all }

    /// Stops listening, closes every connection and the loop.
    func stop() async {
        try? await server.close()
        await loop.shutdownGracefully()
    }

    /// Runs `body` with a started peer, stopping it afterwards whatever happens.
    static func with<T>(_ scenario: String = stalls, _ body: (FaultPeer) async throws -> T) async throws -> T {
        let peer = try await start(scenario)
        do {
            let result = try await body(peer)
            await peer.stop()
            return result
        } catch {
            await peer.stop()
            throw error
        }
    }
}
