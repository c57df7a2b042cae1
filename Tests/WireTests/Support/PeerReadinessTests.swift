import Foundation
import Testing
import WireTestSupport

extension IOSuite {
    /// The waits the peers' helpers start and stop through: a peer's sign of readiness, its early exit, its exit.
    @Suite struct PeerReadinessTests {
        /// A shell that runs `script` with its standard input held open by the test (so `exec cat` lives until the
        /// pipe closes) and its standard output on a pipe.
        private static func shell(_ script: String) throws -> (Process, input: Pipe, output: Pipe, exit: ProcessExit) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", script]
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            let exit = ProcessExit(of: process)
            return (process, input, output, exit)
        }

        @Test func theLineArrivesAfterOthers() throws {
            let (process, input, output, exit) = try Self.shell("echo starting; printf 'ACC'; echo EPT; exec cat")
            try process.run()
            try PeerReadiness.awaitLine("ACCEPT", on: output.fileHandleForReading, within: .seconds(10))
            #expect(process.isRunning)
            try input.fileHandleForWriting.close()
            #expect(exit.wait(timeout: .seconds(10)))
            #expect(!process.isRunning)
        }

        @Test func aPeerThatExitsWithoutTheLineFailsAtOnce() throws {
            let (process, _, output, exit) = try Self.shell("echo something else; exit 3")
            try process.run()
            #expect(throws: PeerReadiness.Failure.exited) {
                try PeerReadiness.awaitLine("ACCEPT", on: output.fileHandleForReading, within: .seconds(60))
            }
            #expect(exit.wait(timeout: .seconds(10)))
            #expect(process.terminationStatus == 3)
        }

        @Test func theFileIsSeenOnceWrittenAndAnExitBeforeItFailsAtOnce() throws {
            let folder = NSTemporaryDirectory() + "wire-readiness-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }

            let (writer, input, output, writerExit) = try Self.shell("echo $$ > '\(folder)/ready.pid'; exec cat >/dev/null")
            try PeerReadiness.awaitFile(named: "ready.pid", in: folder, within: .seconds(10)) {
                try writer.run()
                return output.fileHandleForReading
            }
            #expect(writer.isRunning)
            try input.fileHandleForWriting.close()
            #expect(writerExit.wait(timeout: .seconds(10)))

            let (quitter, _, quitterOutput, quitterExit) = try Self.shell("exit 1")
            #expect(throws: PeerReadiness.Failure.exited) {
                try PeerReadiness.awaitFile(named: "never.pid", in: folder, within: .seconds(60)) {
                    try quitter.run()
                    return quitterOutput.fileHandleForReading
                }
            }
            #expect(quitterExit.wait(timeout: .seconds(10)))
        }

        @Test func aWaitForAnExitRunsOutWhileTheProcessLives() throws {
            let (process, input, _, exit) = try Self.shell("exec cat")
            try process.run()
            #expect(!exit.wait(timeout: .milliseconds(50)))
            try input.fileHandleForWriting.close()
            #expect(exit.wait(timeout: .seconds(10)))
            #expect(exit.wait(timeout: .zero))
        }
    }
}
