import Foundation
import Glibc

/// `openssl s_server -www` on a free loopback port: a real TLS peer that resumes sessions (tickets, and its session
/// cache for TLS 1.2) and answers `GET /` with a status page saying `New, TLSv1.3, …` or `Reused, TLSv1.3, …` before
/// closing the connection (HTTP/1.0, body to the close). It serves one connection at a time.
///
/// Run through a shell with a watcher, as `TestNginx` is: the server is SIGKILLed when `stop()` closes the pipe, or
/// when the test process ends however it ends.
public final class TestOpenSSLServer: Sendable {
    /// The loopback port it listens on.
    public let port: Int
    private let process: Process
    private let keepAlive: Pipe
    /// The server's standard output: `ACCEPT` once it listens, then (with `-www`) nothing.
    private let output: Pipe

    /// Starts the server and waits (at most 10 s) until it accepts connections: until it says `ACCEPT`.
    /// - Parameters:
    ///   - certificate: The leaf (PEM).
    ///   - key: Its private key (PEM).
    ///   - chain: Intermediates sent after the leaf (PEM), if any.
    public init(certificate: String, key: String, chain: String? = nil) throws {
        port = try TestNginx.freePort()
        var arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate, "-key", key, "-www"]
        if let chain { arguments += ["-cert_chain", chain] }
        let script = #"exec 3<&0; "$0" "$@" </dev/null & pid=$!; (cat <&3 >/dev/null; kill -9 $pid) >/dev/null & wait $pid"#
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, "openssl"] + arguments
        keepAlive = Pipe()
        output = Pipe()
        process.standardInput = keepAlive
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        do {
            try PeerReadiness.awaitLine("ACCEPT", on: output.fileHandleForReading, within: .seconds(10))
        } catch {
            stop()
            throw DidNotStart()
        }
    }

    /// `openssl s_server` exited, or did not listen within 10 s.
    public struct DidNotStart: Error, CustomStringConvertible {
        /// For the test's failure message.
        public var description: String { "openssl s_server did not start" }
    }

    /// Stops the server (closing the pipe makes the watcher SIGKILL it; the shell is killed too).
    public func stop() {
        try? keepAlive.fileHandleForWriting.close()
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
