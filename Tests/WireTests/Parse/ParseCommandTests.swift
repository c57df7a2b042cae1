import Foundation
import Testing
import WireTestSupport

extension IOSuite {
    // Opens files or runs processes: an I/O test (IOSuite), never beside one that compares descriptors.
    /// Runs the built `wire parse` on fixed inputs and checks its exact output lines and exit status.
    ///
    /// The tool is run as a process because its contract is its bytes on stdout and its exit status. `swift build
    /// --build-tests` builds it next to the tests.
    @Suite struct ParseCommandTests {
        /// The result of one run.
        struct Run {
            var lines: [String]
            var status: Int32
        }

        /// The `wire` executable in the build folder that holds this test binary, or in the package's `.build/debug`.
        static func toolURL() throws -> URL {
            let fileManager = FileManager.default
            var candidates: [URL] = []
            let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            var folder = testBinary.deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(folder.appendingPathComponent("wire"))
                folder = folder.deletingLastPathComponent()
            }
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent()
            candidates.append(root.appendingPathComponent(".build/debug/wire"))
            return try #require(
                candidates.first { fileManager.isExecutableFile(atPath: $0.path) && !$0.hasDirectoryPath },
                "wire executable not found; build it with `swift build --build-tests`")
        }

        /// Runs `wire parse arguments` with `input` on standard input, for at most 30 seconds.
        static func parse(_ input: [UInt8], _ arguments: [String]) throws -> Run {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wire-parse-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let inputURL = folder.appendingPathComponent("in")
            let outputURL = folder.appendingPathComponent("out")
            try Data(input).write(to: inputURL)
            _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)

            let process = Process()
            process.executableURL = try toolURL()
            process.arguments = ["parse"] + arguments
            process.standardInput = try FileHandle(forReadingFrom: inputURL)
            process.standardOutput = try FileHandle(forWritingTo: outputURL)
            process.standardError = FileHandle.nullDevice
            let exit = ProcessExit(of: process)
            try process.run()
            if !exit.wait(timeout: .seconds(30)) {
                process.terminate()
                process.waitUntilExit()
                Issue.record("wire parse did not finish within 30 s")
            }
            let output = try String(decoding: Data(contentsOf: outputURL), as: UTF8.self)
            return Run(lines: output.split(separator: "\n").map(String.init), status: process.terminationStatus)
        }

        static func parse(_ text: String, _ arguments: [String]) throws -> Run {
            try parse(Array(text.utf8), arguments)
        }

        @Test func pipelinedRequestsPrintOneLineEach() throws {
            let run = try Self.parse(
                "GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
                    + "GET /c HTTP/1.0\r\n\r\n",
                ["--request"])
            #expect(run.status == 0)
            #expect(
                run.lines == [
                    #"{"method": "GET", "target": "/a", "version": "HTTP/1.1", "headers": [["Host", "x"]], "body_b64": "", "keep_alive": true}"#,
                    #"{"method": "POST", "target": "/b", "version": "HTTP/1.1", "headers": [["Host", "x"], ["Content-Length", "3"]], "body_b64": "YWJj", "keep_alive": true}"#,
                    #"{"method": "GET", "target": "/c", "version": "HTTP/1.0", "headers": [], "body_b64": "", "keep_alive": false}"#,
                ])
        }

        @Test func responseToHeadHasNoBody() throws {
            let run = try Self.parse(
                "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
                ["--response", "--method", "HEAD", "--method", "GET"])
            #expect(run.status == 0)
            #expect(
                run.lines == [
                    #"{"version": "HTTP/1.1", "status": 200, "reason": "OK", "headers": [["Content-Length", "5"]], "body_b64": "", "keep_alive": true}"#,
                    #"{"version": "HTTP/1.1", "status": 200, "reason": "OK", "headers": [["Content-Length", "2"]], "body_b64": "aGk=", "keep_alive": true}"#,
                ])
        }

        @Test func theLastMethodAnswersEveryLaterResponse() throws {
            // A pipeline of HEAD answers: none has a body, whatever Content-Length says (RFC 9110 §9.3.2).
            let head = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
            let run = try Self.parse(head + "HTTP/1.1 100 Continue\r\n\r\n" + head + head, ["--response", "--method", "HEAD"])
            #expect(run.status == 0)
            let line =
                #"{"version": "HTTP/1.1", "status": 200, "reason": "OK", "headers": [["Content-Length", "5"]], "body_b64": "", "keep_alive": true}"#
            #expect(
                run.lines == [
                    line,
                    #"{"version": "HTTP/1.1", "status": 100, "reason": "Continue", "headers": [], "body_b64": "", "keep_alive": true}"#,
                    line, line,
                ])
            // GET after HEAD: the GET answers the rest.
            let mixed = try Self.parse(
                head + head + "hello" + head + "world", ["--response", "--method", "HEAD", "--method", "GET"])
            #expect(mixed.status == 0)
            #expect(mixed.lines.map { $0.contains(#""body_b64": """#) } == [true, false, false])
        }

        @Test func interimAndChunkedWithTrailers() throws {
            let run = try Self.parse(
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "4\r\nWiki\r\n5;x=y\r\npedia\r\n0\r\nX-Sum: 9\r\n\r\n",
                ["--response"])
            #expect(run.status == 0)
            #expect(
                run.lines == [
                    #"{"version": "HTTP/1.1", "status": 100, "reason": "Continue", "headers": [], "body_b64": "", "keep_alive": true}"#,
                    #"{"version": "HTTP/1.1", "status": 200, "reason": "OK", "headers": [["Transfer-Encoding", "chunked"]], "body_b64": "V2lraXBlZGlh", "keep_alive": true, "trailers": [["X-Sum", "9"]]}"#,
                ])
        }

        @Test func closeDelimitedBodyEndsAtEndOfInput() throws {
            let run = try Self.parse("HTTP/1.1 200 OK\r\n\r\nto the end", ["--response"])
            #expect(run.status == 0)
            #expect(
                run.lines == [
                    #"{"version": "HTTP/1.1", "status": 200, "reason": "OK", "headers": [], "body_b64": "dG8gdGhlIGVuZA==", "keep_alive": false}"#
                ])
        }

        @Test func protocolErrorFollowsCompleteMessages() throws {
            let run = try Self.parse(
                "GET / HTTP/1.1\r\nHost: x\r\n\r\nPOST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                ["--request"])
            #expect(run.status == 1)
            #expect(run.lines.count == 2)
            #expect(run.lines.last == #"{"error": "conflicting_content_length", "offset": 88}"#)
        }

        @Test func transferEncodingInAnHTTP10ResponseIsAnError() throws {
            // RFC 9112 §6.1: faulty framing, not a chunked body; the error names the field's offset.
            let run = try Self.parse(
                "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
                    + "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
                ["--response"])
            #expect(run.status == 1)
            #expect(run.lines.count == 2)
            #expect(run.lines.last == #"{"error": "transfer_encoding_in_http10", "offset": 55}"#)
        }

        @Test func obsFoldIsUnfoldedInResponsesAndRefusedInRequests() throws {
            // As HTTPClient and HTTPServer read them (RFC 9112 §5.2).
            let response = try Self.parse("HTTP/1.1 204 No Content\r\nX: a\r\n b\r\n\r\n", ["--response"])
            #expect(response.status == 0)
            #expect(
                response.lines == [
                    #"{"version": "HTTP/1.1", "status": 204, "reason": "No Content", "headers": [["X", "a b"]], "body_b64": "", "keep_alive": true, "repairs": [{"kind": "obsolete_line_folding", "offset": 31}]}"#
                ])
            let request = try Self.parse("GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", ["--request"])
            #expect(request.status == 1)
            #expect(request.lines == [#"{"error": "obsolete_line_folding", "offset": 31}"#])
        }

        @Test func aStreamOfInterimResponsesOnlyIsTruncated() throws {
            let run = try Self.parse("HTTP/1.1 100 Continue\r\n\r\n", ["--response"])
            #expect(run.status == 1)
            #expect(
                run.lines == [
                    #"{"version": "HTTP/1.1", "status": 100, "reason": "Continue", "headers": [], "body_b64": "", "keep_alive": true}"#,
                    #"{"error": "unexpected_end_of_stream", "offset": 25}"#,
                ])
        }

        @Test func truncatedMessageIsAnError() throws {
            let run = try Self.parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc", ["--request"])
            #expect(run.status == 1)
            #expect(run.lines == [#"{"error": "unexpected_end_of_stream", "offset": 51}"#])
        }

        @Test func binaryBodyIsBase64() throws {
            let body: [UInt8] = [0x00, 0xFF, 0x0D, 0x0A, 0x80, 0x7F]
            let run = try Self.parse(
                Array("PUT /b HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\n".utf8) + body, ["--request"])
            #expect(run.status == 0)
            #expect(run.lines.first?.contains(#""body_b64": "AP8NCoB/""#) == true)
        }

        @Test func eachByteMapsToTheCodePointOfTheSameValue() throws {
            // 0x80, 0xC3 0xA9 (UTF-8 "é") and 0xFF in a reason phrase, a field value and a trailer: every byte is
            // U+00NN, escaped, valid UTF-8 or not, so the output is ASCII and the bytes come back exactly.
            let obs: [UInt8] = [0x80, 0x62, 0xC3, 0xA9, 0x63, 0xFF]
            let input =
                Array("HTTP/1.1 200 a".utf8) + obs + Array("\r\nX-A: a".utf8) + obs
                + Array("\r\nX-B: caf\u{E9}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: a".utf8) + obs
                + Array("\r\n\r\n".utf8)
            let run = try Self.parse(input, ["--response"])
            #expect(run.status == 0)
            let mapped = #"a\u0080b\u00c3\u00a9c\u00ff"#
            #expect(
                run.lines == [
                    #"{"version": "HTTP/1.1", "status": 200, "reason": "\#(mapped)", "headers": [["X-A", "\#(mapped)"], ["X-B", "caf\u00c3\u00a9"], ["Transfer-Encoding", "chunked"]], "body_b64": "", "keep_alive": true, "trailers": [["X-T", "\#(mapped)"]]}"#
                ])
            let request = try Self.parse(
                Array("GET / HTTP/1.1\r\nHost: x\r\nX-A: a".utf8) + obs + Array("\r\n\r\n".utf8), ["--request"])
            #expect(
                request.lines == [
                    #"{"method": "GET", "target": "/", "version": "HTTP/1.1", "headers": [["Host", "x"], ["X-A", "\#(mapped)"]], "body_b64": "", "keep_alive": true}"#
                ])
        }

        @Test func lenientListsRepairs() throws {
            let run = try Self.parse("GET / HTTP/1.1\nHost: x\n\n", ["--request", "--lenient"])
            #expect(run.status == 0)
            #expect(
                run.lines == [
                    #"{"method": "GET", "target": "/", "version": "HTTP/1.1", "headers": [["Host", "x"]], "body_b64": "", "keep_alive": true, "repairs": [{"kind": "bare_lf", "offset": 14}]}"#
                ])
            let strict = try Self.parse("GET / HTTP/1.1\nHost: x\n\n", ["--request"])
            #expect(strict.status == 1)
            #expect(strict.lines == [#"{"error": "bare_lf", "offset": 14}"#])
        }

        @Test(arguments: [
            [], ["--request", "--response"], ["--request", "--bogus"], ["--response", "--method"],
            ["--request", "--method", "GET"], ["--response", "--method", "G T"],
        ])
        func usageErrorsExitTwo(arguments: [String]) throws {
            let run = try Self.parse("", arguments)
            #expect(run.status == 2)
            #expect(run.lines.isEmpty)
        }
    }
}
