import Foundation
import Testing
import WireTool

extension IOSuite {
    /// `wire get -F` as curl has it: the same multipart body byte for byte (boundaries aside), read errors as 26.
    @Suite struct GetCommandFormTests {
        /// `body` with its boundary (the first line, less its `--`) replaced by `B`.
        static func normalized(_ body: [UInt8]) throws -> String {
            let text = String(decoding: body, as: UTF8.self)
            let firstLine = try #require(text.components(separatedBy: "\r\n").first)
            try #require(firstLine.hasPrefix("--") && firstLine.count > 10, "\(text.prefix(200))")
            return text.replacingOccurrences(of: String(firstLine.dropFirst(2)), with: "B")
        }

        @Test func formIsBuiltAsCurlBuildsIt() async throws {
            try await GetCommandPeerTests.withPeer { base in
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let image = folder.appendingPathComponent("pic.png")
                try Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }).write(to: image)
                let notes = folder.appendingPathComponent("notes.data")
                try Data("line one\nline two\n".utf8).write(to: notes)
                let fields = [
                    "-F", "title=café & co", "-F", "pic=@\(image.path)", "-F",
                    "doc=@\(notes.path);type=text/x-notes;filename=n.txt",
                    "-F", "raw=@\(notes.path)", "-F", "inline=<\(notes.path)",
                ]
                let wire = try await WireToolRunner.run(["get", "-s"] + fields + ["\(base)/echo"])
                #expect(wire.status == 0, "\(wire.errors)")
                let curl = try await WireToolRunner.run(
                    program: URL(fileURLWithPath: "/usr/bin/curl"), ["-s"] + fields + ["\(base)/echo"])
                #expect(curl.status == 0)
                let wireBody = try Self.normalized(wire.output)
                #expect(wireBody == (try Self.normalized(curl.output)))
                #expect(
                    wireBody.contains(
                        "Content-Disposition: form-data; name=\"doc\"; filename=\"n.txt\"\r\nContent-Type: text/x-notes\r\n"))
                #expect(wireBody.contains("name=\"raw\"; filename=\"notes.data\"\r\nContent-Type: application/octet-stream\r\n"))
                #expect(wireBody.hasSuffix("\r\n--B--\r\n"))
                let head = try await WireToolRunner.run(["get", "-s", "-i", "-F", "a=1", "\(base)/echo"])
                #expect(head.text.contains("X-Method: POST\r\n"))
            }
        }

        @Test func aFileThatCannotBeReadExits26BeforeConnecting() async throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            for value in ["f=@\(folder.path)/missing.bin", "f=@\(folder.path)", "f=<\(folder.path)/missing.txt"] {
                // Port 1 refuses connections: a 26 means the file was checked before any connection was tried.
                let run = try await WireToolRunner.run(["get", "-sS", "-F", value, "http://127.0.0.1:1/"])
                #expect(run.status == 26, "\(value): \(run.errors)")
                #expect(run.errors.hasPrefix("wire: (26) cannot read "), "\(run.errors)")
            }
        }

        /// curl writes `;type=` into the part as given, so CR LF in it adds a header line of the user's choosing;
        /// wire refuses the option (curl's 2, an option it cannot use) before anything is sent.
        @Test func aPartTypeWithCRorLFExits2AndNothingIsSent() async throws {
            try await GetCommandPeerTests.withPeer { base in
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let file = folder.appendingPathComponent("x.txt")
                try Data("x".utf8).write(to: file)
                for type in ["text/plain\r\nEvil: b", "text/plain\nEvil: b"] {  // (an argument cannot hold a NUL)
                    let run = try await WireToolRunner.run([
                        "get", "-sS", "-F", "a=1", "-F", "f=@\(file.path);type=\(type)", "\(base)/echo",
                    ])
                    #expect(run.status == 2, "\(run.errors)")
                    #expect(run.output.isEmpty)
                    #expect(
                        run.errors.hasPrefix(
                            "wire: (2) option -F: multipart part 2 (\"f\"): the value of its Content-Type field holds "),
                        "\(run.errors)")
                }
            }
        }

        @Test func formWithDataOrHeadIsAUsageError() async throws {
            for words in [["-F", "a=1", "-d", "b=2"], ["-I", "-F", "a=1"], ["-F", "novalue"]] {
                let run = try await WireToolRunner.run(["get"] + words + ["http://127.0.0.1:1/"])
                #expect(run.status == 2, "\(words)")
            }
        }

        @Test func formValuesParseAsCurlsDo() throws {
            #expect(try FormPart("a=b=c") == FormPart(name: "a", content: .text("b=c")))
            #expect(
                try FormPart("f=@x.bin;filename=\"y z.bin\";type=a/b")
                    == FormPart(name: "f", content: .file(path: "x.bin", type: "a/b", fileName: "y z.bin")))
            #expect(try FormPart("t=<in.txt") == FormPart(name: "t", content: .textFile("in.txt")))
            #expect(FormPart.curlType(of: "A.JPG") == "image/jpeg")
            #expect(FormPart.curlType(of: "x.json") == "application/octet-stream")
        }
    }
}
