import Foundation
import Testing
import WireTestSupport

/// Runs `bash -c command` with extra environment, standard input from /dev/null, and a 20 s bound: past it the
/// process is killed and the test fails, so a stuck command can never hang the suite.
func runBash(_ command: String, environment extra: [String: String] = [:]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = ["-c", command]
    process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
    process.standardInput = FileHandle.nullDevice
    let exit = ProcessExit(of: process)
    try process.run()
    if !exit.wait(timeout: .seconds(20)) {
        kill(process.processIdentifier, SIGKILL)
        Issue.record("bash -c timed out: \(command)")
    }
    process.waitUntilExit()
    return process.terminationStatus
}

/// A fresh temporary folder for one test.
func makeTemporaryFolder() throws -> String {
    let path = NSTemporaryDirectory() + "wireclient-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
