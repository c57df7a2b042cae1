import Foundation
import Testing
import Wire
import WireTestSupport
import WireTool

/// `-C -` and `-C OFFSET` parsing and curl's reading of the answers, without a server.
struct OutputResumeTests {
    @Test func continueAtTakesADashOrAnOffset() throws {
        #expect(try FetchOptions(["-C", "-", "-o", "f", "http://a/"], requiresMethod: false).continuesOutput)
        #expect(try FetchOptions(["--continue-at=-", "http://a/"], requiresMethod: false).continuesOutput)
        #expect(try FetchOptions(["-sC", "-", "http://a/"], requiresMethod: false).continuesOutput)
        #expect(try !FetchOptions(["http://a/"], requiresMethod: false).continuesOutput)
        let offset = try FetchOptions(["-C", "100", "http://a/"], requiresMethod: false)
        #expect(offset.resumeOffset == 100 && !offset.continuesOutput)
        #expect(throws: FetchUsageError.self) { try FetchOptions(["-C", "x", "http://a/"], requiresMethod: false) }
        #expect(throws: FetchUsageError.self) { try FetchOptions(["-C"], requiresMethod: false) }
    }

    @Test func theVerdictFollowsCurl() throws {
        let folder = try WireToolRunner.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("part").path
        try Data(count: 100).write(to: URL(fileURLWithPath: path))
        let options = try FetchOptions(["-C", "-", "-o", path, "http://a/"], requiresMethod: false)
        let resume = try #require(OutputResume(options: options, output: path))
        #expect(resume.offset == 100)
        #expect(resume.verdict(status: 206, headers: ["Content-Range": "bytes 100-199/200"]) == .append(length: 100))
        #expect(resume.verdict(status: 206, headers: ["Content-Range": "bytes 0-199/200"]) == .cannotResume)
        #expect(resume.verdict(status: 206, headers: ["Content-Range": "nonsense"]) == .cannotResume)
        #expect(resume.verdict(status: 206, headers: [:]) == .cannotResume)
        #expect(resume.verdict(status: 200, headers: ["Content-Length": "200"]) == .cannotResume)
        #expect(resume.verdict(status: 200, headers: ["Content-Length": "100"]) == .alreadyComplete)
        #expect(resume.verdict(status: 416, headers: ["Content-Range": "bytes */100"]) == .alreadyComplete)
        #expect(resume.verdict(status: 404, headers: ["Content-Length": "9"]) == .cannotResume)
        // Nothing to continue: no file, an empty one, standard output, no -C.
        #expect(OutputResume(options: options, output: folder.appendingPathComponent("none").path) == nil)
        #expect(OutputResume(options: options, output: "-") == nil)
        #expect(OutputResume(options: options, output: nil) == nil)
        #expect(OutputResume(options: try FetchOptions(["-o", path, "http://a/"], requiresMethod: false), output: path) == nil)
    }
}

extension IOSuite {
    /// `wire get -C -` against nginx (ranges) and Python's http.server (no ranges), side by side with curl.
    @Suite(.enabled(if: TestNginx.isInstalled, "nginx is not installed")) struct GetCommandResumeTests {
        static func randomBytes(_ count: Int, seed: UInt64) -> Data {
            var random = SplitMix64(seed: seed)
            return Data((0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }

        @Test func aTruncatedFileIsResumedToTheExactOriginalFromNginx() async throws {
            let seed = UInt64.random(in: 1...UInt64.max)
            let original = Self.randomBytes(3 << 20, seed: seed)
            let nginx = try TestNginx(files: ["big.bin": original])
            defer { nginx.stop() }
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let output = folder.appendingPathComponent("big.bin")
            var random = SplitMix64(seed: seed)
            let cut = Int.random(in: 1..<original.count, using: &random)
            try original.prefix(cut).write(to: output)
            let run = try await WireToolRunner.run(["get", "-sS", "-C", "-", "-o", output.path, nginx.baseURL + "/big.bin"])
            #expect(run.status == 0, "\(run.errors) (seed \(seed))")
            #expect(try Data(contentsOf: output) == original, "seed \(seed), cut at \(cut)")
            let log = try String(contentsOfFile: nginx.prefix + "/logs/access.log", encoding: .utf8)
            #expect(log.contains("\" 206 \(original.count - cut) "))
        }

        @Test func aServerThatIgnoresRangesExits33AndLeavesTheFile() async throws {
            let (peer, port) = try await startPythonPeer()
            defer { peer.stop() }
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let output = folder.appendingPathComponent("part")
            let partial = Data((0..<1000).map { UInt8($0 % 251) })
            try partial.write(to: output)
            let run = try await WireToolRunner.run([
                "get", "-sS", "-C", "-", "-o", output.path, "http://127.0.0.1:\(port)/bytes/100000",
            ])
            #expect(run.status == 33)
            #expect(run.errors.contains("doesn't seem to support byte ranges"))
            #expect(try Data(contentsOf: output) == partial)
        }

        /// Each case run by curl and by wire on identical files: the same exit status and the same file after.
        @Test func exitStatusesAndFilesMatchCurl() async throws {
            let original = Self.randomBytes(200_000, seed: 7)
            let nginx = try TestNginx(files: ["f.bin": original])
            defer { nginx.stop() }
            let (peer, port) = try await startPythonPeer()
            defer { peer.stop() }
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let pattern = Data((0..<5000).map { UInt8($0 % 251) })
            let python = "http://127.0.0.1:\(port)"
            let cases: [(name: String, start: Data, url: String, extra: [String])] = [
                ("nginx partial", original.prefix(70_000), nginx.baseURL + "/f.bin", []),
                ("nginx complete: 416", original, nginx.baseURL + "/f.bin", []),
                ("nginx complete with --fail", original, nginx.baseURL + "/f.bin", ["-f"]),
                ("nginx longer than the file: 416", original + Data(count: 10), nginx.baseURL + "/f.bin", []),
                ("nginx 404", original.prefix(10), nginx.baseURL + "/missing", []),
                ("no ranges, partial", pattern.prefix(100), python + "/bytes/5000", []),
                ("no ranges, complete length", pattern, python + "/bytes/5000", []),
                ("no file yet", Data(), python + "/bytes/5000", []),
            ]
            for (index, entry) in cases.enumerated() {
                var statuses: [Int32] = []
                var files: [Data] = []
                for tool in ["curl", "wire"] {
                    let path = folder.appendingPathComponent("\(index)-\(tool)").path
                    if !entry.start.isEmpty || entry.name != "no file yet" {
                        try entry.start.write(to: URL(fileURLWithPath: path))
                    }
                    let arguments = ["-s", "-C", "-", "-o", path] + entry.extra + [entry.url]
                    let run =
                        tool == "curl"
                        ? try await WireToolRunner.run(program: URL(fileURLWithPath: "/usr/bin/curl"), arguments)
                        : try await WireToolRunner.run(["get"] + arguments)
                    statuses.append(run.status)
                    files.append(try Data(contentsOf: URL(fileURLWithPath: path)))
                }
                #expect(statuses[0] == statuses[1], "\(entry.name): curl \(statuses[0]), wire \(statuses[1])")
                #expect(files[0] == files[1], "\(entry.name): the files differ")
            }
        }
    }
}

extension IOSuite {
    /// `-C -` against a 206 whose body does not fit its `Content-Range`: nothing past the range is ever appended.
    /// curl 7.88 appends such a body whole (exit 0); wire refuses with curl's code for an answer that cannot
    /// continue the file (33) and leaves the file as it was; a body that ends short of the range is a partial
    /// transfer (18).
    @Suite struct GetCommandResumeRangeTests {
        static let partial = Data((0..<6240).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

        /// `wire get -C -` on a file holding `partial`, against a server answering `reply`; the run and the file after.
        static func resume(answering reply: String) async throws -> (WireToolRunner.Run, Data) {
            let group = try EventLoopGroup(loopCount: 1)
            let server = try await ScriptedServer.start(on: group.next()) { _, _, head in
                head.contains("\r\nRange: bytes=6240-")
                    ? .respondAndClose(reply) : .respond("HTTP/1.1 400 Bad\r\nContent-Length: 0\r\n\r\n")
            }
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let output = folder.appendingPathComponent("file")
            try partial.write(to: output)
            let run: WireToolRunner.Run
            do {
                run = try await WireToolRunner.run([
                    "get", "-sS", "-C", "-", "-o", output.path, "http://127.0.0.1:\(server.address.port!)/file",
                ])
            } catch {
                try await server.close()
                await group.shutdownGracefully()
                throw error
            }
            try await server.close()
            await group.shutdownGracefully()
            return (run, try Data(contentsOf: output))
        }

        static func chunked(_ pieces: [Int]) -> String {
            pieces.map { String($0, radix: 16) + "\r\n" + String(repeating: "B", count: $0) + "\r\n" }.joined() + "0\r\n\r\n"
        }

        @Test func aContentLengthLongerThanTheRangeExits33AndLeavesTheFile() async throws {
            let (run, file) = try await Self.resume(
                answering: "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 6240-10239/10240\r\n"
                    + "Content-Length: 8000\r\n\r\n" + String(repeating: "B", count: 8000))
            #expect(run.status == 33, "\(run.errors)")
            #expect(run.errors.contains("Content-Length 8000 disagrees with its Content-Range of 4000 bytes"), "\(run.errors)")
            #expect(file == Self.partial)
        }

        @Test func aContentLengthShorterThanTheRangeExits33AndLeavesTheFile() async throws {
            let (run, file) = try await Self.resume(
                answering: "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 6240-10239/10240\r\n"
                    + "Content-Length: 100\r\n\r\n" + String(repeating: "B", count: 100))
            #expect(run.status == 33, "\(run.errors)")
            #expect(file == Self.partial)
        }

        @Test func aChunkedBodyRunningPastTheRangeExits33AndTheFileIsCutBack() async throws {
            // The first chunks fit the range and are written; the last one runs past it.
            let (run, file) = try await Self.resume(
                answering: "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 6240-10239/10240\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n" + Self.chunked([3000, 1000, 4000]))
            #expect(run.status == 33, "\(run.errors)")
            #expect(run.errors.contains("runs past its Content-Range of 4000 bytes"), "\(run.errors)")
            #expect(file == Self.partial, "the file holds \(file.count) bytes")
        }

        @Test func aChunkedBodyEndingShortOfTheRangeExits18AndKeepsWhatCame() async throws {
            let (run, file) = try await Self.resume(
                answering: "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 6240-10239/10240\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n" + Self.chunked([3000]))
            #expect(run.status == 18, "\(run.errors)")
            #expect(file == Self.partial + Data(repeating: UInt8(ascii: "B"), count: 3000))
        }

        @Test func aBodyThatFitsItsRangeIsAppended() async throws {
            for framing in [
                "Content-Length: 4000\r\n\r\n" + String(repeating: "B", count: 4000),
                "Transfer-Encoding: chunked\r\n\r\n" + Self.chunked([3000, 1000]),
            ] {
                let (run, file) = try await Self.resume(
                    answering: "HTTP/1.1 206 Partial Content\r\n"
                        + "Content-Range: bytes 6240-10239/10240\r\n" + framing)
                #expect(run.status == 0, "\(run.errors)")
                #expect(file == Self.partial + Data(repeating: UInt8(ascii: "B"), count: 4000))
            }
        }
    }
}
