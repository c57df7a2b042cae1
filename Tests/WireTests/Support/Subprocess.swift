import Foundation
import Testing
import WireTestSupport

/// A child process for tests: a real peer (Python's http.server, curl, nginx) or the `wire` tool.
/// Its standard input is a pipe the test holds: when the test process ends, however it ends,
/// the pipe closes and a well-behaved peer exits.
final class TestProcess {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private let exit: ProcessExit

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        exit = ProcessExit(of: process)
        try process.run()
    }

    /// The read end of the process's standard output: for a peer that writes nothing there, it reaches end of file
    /// when the process exits (`PeerReadiness`).
    var standardOutput: FileHandle { output.fileHandleForReading }

    /// The first line the process writes to standard output. Read on a thread of its own: a blocking read on one of
    /// the few threads Swift's concurrency runs every test on would stall the others' tasks (and their timeouts).
    /// Bounded (`withTimeout`, 60 s): a peer that never writes the line fails the test instead of hanging the run;
    /// the reading thread ends when `stop()` closes the pipe.
    func firstLine(within seconds: Double = 60) async throws -> String {
        let handle = output.fileHandleForReading
        return try await withTimeout(seconds: seconds) {
            try await withCheckedThrowingContinuation { continuation in
                Thread { continuation.resume(with: Result { try Self.readLine(from: handle) }) }.start()
            }
        }
    }

    /// The next line the process writes to standard output (after those already read), on a thread of its own.
    func nextLine() async throws -> String { try await firstLine() }

    private static func readLine(from handle: FileHandle) throws -> String {
        var bytes: [UInt8] = []
        while true {
            let byte = try handle.read(upToCount: 1) ?? Data()
            guard let first = byte.first, first != 0x0A else { break }
            bytes.append(first)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Ends the process and waits for it: closes its stdin, sends SIGTERM, and after 3 s
    /// SIGKILL, so a peer that ignores the polite ways can never hang a test.
    func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        if !exit.wait(timeout: .seconds(3)) { kill(process.processIdentifier, SIGKILL) }
        // Bounded, not `waitUntilExit()`: that spins until Foundation itself notices the exit, and once it never did
        // (the killed child left a zombie nobody reaped, the test process at full CPU until CI's limit). A killed
        // process is gone within milliseconds; if Foundation has not said so in 10 s, the child is reaped here.
        if !exit.wait(timeout: .seconds(10)) {
            var status: Int32 = 0
            _ = waitpid(process.processIdentifier, &status, WNOHANG)
        }
        // Now, not whenever Foundation lets go of the pipes: a test that counts descriptors runs next.
        try? output.fileHandleForReading.close()
        try? errors.fileHandleForReading.close()
    }
}

/// The folder of test resources, beside this file's folder.
let testResources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Resources").path

/// Starts `Resources/http_peer.py` and returns it with its port.
func startPythonPeer() async throws -> (TestProcess, Int) {
    let peer = try TestProcess("/usr/bin/env", ["python3", "\(testResources)/http_peer.py"])
    guard let port = Int(try await peer.firstLine()) else {
        peer.stop()
        throw TestTimeout(seconds: 0)
    }
    return (peer, port)
}

extension TestProcess {
    /// nginx run from `prefix` (its `conf/nginx.conf`, whose `pid` must be `logs/nginx.pid`), once it listens: nginx
    /// writes its pid file after every listening socket listens. nginx ignores its standard input, and a child
    /// spawned from a test thread inherits that thread's signal mask, where SIGTERM may be blocked, so a shell runs it
    /// and SIGKILLs it once the test's pipe closes (on `stop()`, or when the test process ends however it ends).
    /// nginx's and the watcher's output go nowhere, so the shell's output ends when nginx exits: an nginx that fails
    /// to start fails the wait at once.
    /// - Throws: `failure` when nginx exited or did not listen within 10 s.
    static func nginx(_ executable: String, prefix: String, failure: some Error) throws -> TestProcess {
        let script =
            #"exec 3<&0; "$0" "$@" </dev/null >/dev/null & pid=$!; (cat <&3 >/dev/null; kill -9 $pid) >/dev/null & wait $pid"#
        var started: TestProcess?
        do {
            try PeerReadiness.awaitFile(named: "nginx.pid", in: prefix + "/logs", within: .seconds(10)) {
                let shell = try TestProcess(
                    "/bin/sh",
                    [
                        "-c", script, executable, "-p", prefix, "-e", "\(prefix)/logs/error.log", "-c",
                        "\(prefix)/conf/nginx.conf",
                    ])
                started = shell
                return shell.standardOutput
            }
        } catch {
            started?.stop()
            throw failure
        }
        guard let started else { throw failure }
        return started
    }
}
