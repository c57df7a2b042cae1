import Foundation

/// A Python script that prints its port on its first line, started with standard input from /dev/null.
enum PythonPeer {
    /// The script did not print a port within 10 s, or exited first.
    struct DidNotStart: Error {}

    /// Runs `python3 script` with its standard output in `folder/port` and waits (at most 10 s) for the port line.
    /// - Returns: The running process and its port; the caller stops it (SIGKILL: the child may have SIGTERM blocked).
    static func start(script: String, folder: String) async throws -> (process: Process, port: Int) {
        let process = Process()
        let portFile = folder + "/port"
        _ = FileManager.default.createFile(atPath: portFile, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: portFile))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        var found: Int?
        while found == nil && Date() < deadline && process.isRunning {
            let text = (try? String(contentsOfFile: portFile, encoding: .utf8)) ?? ""
            if text.hasSuffix("\n") { found = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) }
            // A task's sleep, not the thread's: the test's thread is one of the few every test's tasks run on.
            if found == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        guard let found else {
            kill(process.processIdentifier, SIGKILL)
            throw DidNotStart()
        }
        return (process, found)
    }
}
