import Foundation
import Glibc
import Testing

/// Runs the built `wire` tool as a process, the way a user does: its contract is its bytes on standard output and
/// standard error, and its exit status.
enum WireToolRunner {
    /// One finished run.
    struct Run: Sendable {
        /// The exit status.
        var status: Int32
        /// Standard output, byte for byte.
        var output: [UInt8]
        /// Standard error, as text.
        var errors: String
        /// Standard output as text.
        var text: String { String(decoding: output, as: UTF8.self) }
    }

    /// `.build/debug/wire`, three folders above this file's folder (the package root).
    static let executable = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build/debug/wire")

    /// A fresh temporary folder for one test's files.
    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wire-get-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Runs `wire arguments` with an empty standard input, for at most `seconds`; the process is killed after that
    /// and the test fails with `TestTimeout`.
    static func run(_ arguments: [String], seconds: Double = 20, environment: [String: String] = [:]) async throws -> Run {
        try await run(program: executable, arguments, seconds: seconds, environment: environment)
    }

    /// Runs another program (a peer such as `openssl s_client`) the same way, with `input` as its standard input
    /// (empty when nil) and `environment` added to this process's.
    static func run(
        program: URL, _ arguments: [String], input: String? = nil, seconds: Double = 20, environment: [String: String] = [:]
    ) async throws -> Run {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let outputURL = folder.appendingPathComponent("stdout")
        let errorURL = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        // Files, not pipes: a pipe nobody drains while the test waits could fill and stall the tool.
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let outputHandle = try FileHandle(forWritingTo: outputURL)
        let errorHandle = try FileHandle(forWritingTo: errorURL)
        var inputHandle: FileHandle?
        // The child has its own copies; ours are closed when it is done, so a run leaves no descriptor behind.
        defer {
            try? outputHandle.close()
            try? errorHandle.close()
            try? inputHandle?.close()
        }
        if let input {
            let inputURL = folder.appendingPathComponent("stdin")
            _ = FileManager.default.createFile(atPath: inputURL.path, contents: Data(input.utf8))
            inputHandle = try FileHandle(forReadingFrom: inputURL)
            process.standardInput = inputHandle
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        process.standardOutput = outputHandle
        process.standardError = errorHandle
        let exit = AsyncStreamBox<Int32>()
        process.terminationHandler = { exit.yield($0.terminationStatus) }
        try process.run()
        let status: Int32
        do {
            status = try await withTimeout(seconds: seconds) { try await exit.next() }
        } catch {
            // SIGKILL: the child inherits the spawning thread's signal mask, in which SIGTERM may be blocked.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw error
        }
        return Run(
            status: status, output: Array(try Data(contentsOf: outputURL)),
            errors: String(decoding: try Data(contentsOf: errorURL), as: UTF8.self))
    }
}
