import Foundation

/// `Tests/WireTests/Resources/cookie_peer.py` (Python's http.server setting cookies with every attribute and echoing
/// the `Cookie` fields it receives) on 127.0.0.1, port 0.
final class CookiePeer {
    private let process: Process
    private let folder: String
    /// The port the peer listens on.
    let port: Int

    /// The script, shared with the tool's tests.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("WireTests/Resources/cookie_peer.py").path

    /// Starts the peer and waits (at most 10 s) for its port.
    init() async throws {
        folder = try makeTemporaryFolder()
        (process, port) = try await PythonPeer.start(script: Self.script, folder: folder)
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// A folder for the test's files, removed with the peer.
    var temporaryFolder: String { folder }

    /// Stops the peer (SIGKILL: the child may have SIGTERM blocked) and removes its folder.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(atPath: folder)
    }

    deinit { stop() }
}
