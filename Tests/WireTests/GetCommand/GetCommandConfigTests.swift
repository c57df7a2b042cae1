import Foundation
import Testing
import Wire
import WireTool

/// `-K`/`--config FILE` in curl's syntax: each line is taken by the command line's parser, where `-K` stands.
struct FetchConfigFileTests {
    /// A temporary folder holding `files` (name → text), removed after `body`.
    static func withFiles(_ files: [String: String], _ body: (URL) throws -> Void) throws {
        let folder = try WireToolRunner.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        try body(folder)
    }

    static func parse(_ words: [String]) throws(FetchUsageError) -> FetchOptions {
        try FetchOptions(words, requiresMethod: false)
    }

    static func failure(_ words: [String]) -> FetchUsageError? {
        do {
            _ = try parse(words)
            return nil
        } catch {
            return error
        }
    }

    @Test func everySyntaxFormIsRead() throws {
        let text = """
            # a comment
               # an indented one
            / and curl's other comment marks
            * star

            header = "X-A: 1"
            header: "X-B: 2"
            header "X-C: 3"
            header="X-D: 4"
            header\t\t"X-E: 5"
            --header "X-F: 6"
            -H "X-G: 7"
            header = "X-H: q\\"b\\\\s\\te\\qx"
            header = X-I:unquoted # a comment after the value
            data = "l1\\nl2\\r\\v"
            -sL
            max-time = 7\r
            url = "http://a/one"
            url http://a/two

            """
        try Self.withFiles(["c.cfg": text]) { folder in
            let options = try Self.parse(["-K", folder.appendingPathComponent("c.cfg").path])
            #expect(
                options.headers.map { "\($0.name): \($0.value)" } == [
                    "X-A: 1", "X-B: 2", "X-C: 3", "X-D: 4", "X-E: 5", "X-F: 6", "X-G: 7", "X-H: q\"b\\s\teqx", "X-I: unquoted",
                ])
            #expect(options.data == [.text("l1\nl2\r\u{0B}")])
            #expect(options.silent && options.followRedirects)
            #expect(options.maxTime == .seconds(7))
            #expect(options.urls == ["http://a/one", "http://a/two"])
            #expect(options.warnings.isEmpty)
        }
    }

    @Test func theFileIsReadWhereKStands() throws {
        let file = """
            header = "X-2: b"
            max-time 9
            url = "http://a/from-file"
            -o file.out
            """
        try Self.withFiles(["f.cfg": file, "g.cfg": "header = \"X-4: d\"\n"]) { folder in
            let f = folder.appendingPathComponent("f.cfg").path
            let g = folder.appendingPathComponent("g.cfg").path
            let options = try Self.parse([
                "-H", "X-1: a", "-o", "first.out", "-K", f, "-H", "X-3: c", "--config", g, "-m", "5", "http://a/cli",
            ])
            #expect(options.headers.map(\.name) == ["X-1", "X-2", "X-3", "X-4"])
            // url lines and -o pair up in order across the file and the command line, as curl pairs them.
            #expect(options.urls == ["http://a/from-file", "http://a/cli"])
            #expect(options.outputs == [.file("first.out"), .file("file.out")])
            // What comes after -K overrides the file; what comes before is overridden by it.
            #expect(options.maxTime == .seconds(5))
            #expect(try Self.parse(["-m", "5", "-K", f]).maxTime == .seconds(9))
            // A file may name another file; -K=FILE and -KFILE are -K as well.
            try Data("config = \"\(g)\"\n".utf8).write(to: folder.appendingPathComponent("h.cfg"))
            let nested = try Self.parse(["-K\(folder.appendingPathComponent("h.cfg").path)", "http://a/"])
            #expect(nested.headers.map(\.name) == ["X-4"])
        }
    }

    @Test func unquotedWhitespaceWarnsAsCurlDoes() throws {
        try Self.withFiles(["w.cfg": "header = X-K: 11\n"]) { folder in
            let path = folder.appendingPathComponent("w.cfg").path
            let options = try Self.parse(["-K", path, "http://a/"])
            // Only the first word is the value: `X-K:` asks for the field's removal.
            #expect(options.headers.isEmpty)
            #expect(
                options.warnings == [
                    "\(path):1: warning: 'header' uses unquoted whitespace in the line that may cause side-effects!"
                ])
        }
    }

    @Test func mistakesNameTheFileAndLine() throws {
        let files = [
            "unknown.cfg": "# fine\n\nbogus-opt\n",
            "novalue.cfg": "header\n",
            "garbage.cfg": "include yes\n",
            "attached.cfg": "-H\"X-P: 15\"\n",
            "badvalue.cfg": "max-time = soon\n",
            "dashed.cfg": "--header: \"X: 1\"\n",
            "nested.cfg": "silent\n-K missing.cfg\n",
            "loop.cfg": "",
        ]
        try Self.withFiles(files) { folder in
            func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
            try Data("config \(path("loop.cfg"))\n".utf8).write(to: folder.appendingPathComponent("loop.cfg"))
            // As curl 7.88: a line it cannot use is skipped with a warning naming the file and line.
            let skipped: [(String, String)] = [
                ("unknown.cfg", ":3: warning: 'bogus-opt' is unknown"),
                ("novalue.cfg", ":1: warning: 'header' requires parameter"),
                ("garbage.cfg", ":1: warning: 'include' had unsupported trailing garbage"),
                ("attached.cfg", ":1: warning: '-H\"X-P:' had unsupported trailing garbage"),
                ("badvalue.cfg", ":1: warning: 'max-time' --max-time needs a number of seconds, not 'soon'"),
                // A name with dashes ends at a blank only: `--header:` is no option.
                ("dashed.cfg", ":1: warning: '--header:' is unknown"),
            ]
            for (name, warning) in skipped {
                let options = try Self.parse(["-K", path(name), "http://a/"])
                #expect(options.warnings == [path(name) + warning], "\(name)")
                #expect(options.urls.count == 1, "\(name)")
            }
            // A file that cannot be read is an error, wherever it is named.
            let nested = Self.failure(["-K", path("nested.cfg"), "http://a/"])
            #expect(
                nested?.message
                    == path("nested.cfg") + ":2: option -K: cannot read config from 'missing.cfg': No such file or directory")
            #expect(nested?.status == 26)
            let missing = Self.failure(["-K", path("none.cfg"), "http://a/"])
            #expect(missing?.message == "option -K: cannot read config from '\(path("none.cfg"))': No such file or directory")
            #expect(missing?.status == 26)
            let loop = Self.failure(["-K", path("loop.cfg"), "http://a/"])
            #expect(loop?.message.hasSuffix("config files nest more than 5 deep") == true)
            #expect(Self.failure(["http://a/", "-K"])?.message == "-K needs a value")
        }
    }
}

extension IOSuite {
    /// `-K` files run by `wire get` and by curl 7.88 against the same raw peer.
    @Suite struct GetCommandConfigTests {
        static let wire = WireToolRunner.executable

        @Test func aConfigFileSendsWhatCurlSends() async throws {
            try await CurlPeer.with { peer, folder in
                let config = folder.appendingPathComponent("request.cfg")
                let text = """
                    # every form curl reads
                    header = "X-A: 1"
                    header: "X-B: 2"
                    --header "X-C: 3"
                    -H "X-D: tab\\there"
                    user-agent = "agent \\"quoted\\" \\\\ slash"
                    referer=http://r/
                    data-binary "a=1&b=2"
                    url = "\(peer.url("/cfg?body=ok"))"

                    """
                try Data(text.utf8).write(to: config)
                let (wire, curl) = try await peer.compareHeads(["-K", config.path])
                #expect(wire.count == 1 && wire == curl, "\(wire) != \(curl)")
                #expect(wire.first?.contains("X-D: tab\there") == true)
                #expect(wire.first?.first == "POST /cfg?body=ok HTTP/1.1")
            }
        }

        @Test func configFromStandardInputAndOutputsPairedWithURLLines() async throws {
            try await CurlPeer.with { peer, folder in
                let config = """
                    url = "\(peer.url("/a?body=A"))"
                    output = "\(folder.appendingPathComponent("a.out").path)"
                    url \(peer.url("/b?body=B"))
                    -o \(folder.appendingPathComponent("b.out").path)

                    """
                let first = folder.appendingPathComponent("first.out").path
                let words = ["-s", "-o", first, "-K", "-", peer.url("/c?body=C")]
                let run = try await WireToolRunner.run(program: Self.wire, ["get"] + words, input: config)
                #expect(run.status == 0, "\(run.errors)")
                let written = try ["first", "a", "b"].map {
                    try String(contentsOfFile: folder.appendingPathComponent("\($0).out").path, encoding: .utf8)
                }
                // Outputs and URLs pair in order, the file's between the command line's: first.out gets /a.
                #expect(written == ["A", "B", "C"])
                for name in ["first", "a", "b"] {
                    try FileManager.default.removeItem(at: folder.appendingPathComponent("\(name).out"))
                }
                let byCurl = try await WireToolRunner.run(program: CurlPeer.curl, words, input: config)
                #expect(byCurl.status == 0)
                let curlWritten = try ["first", "a", "b"].map {
                    try String(contentsOfFile: folder.appendingPathComponent("\($0).out").path, encoding: .utf8)
                }
                #expect(curlWritten == written)
            }
        }

        @Test func anUnknownOptionWarnsAndAMissingFileFailsAsCurl788() async throws {
            try await CurlPeer.with { peer, folder in
                let config = folder.appendingPathComponent("bad.cfg")
                try Data("# first\n\nbogus-opt\n".utf8).write(to: config)
                let wire = try await peer.wire(["-K", config.path, peer.url("/x")])
                // As curl 7.88: a warning naming the file and line, and the transfer goes on (curl 8 stops with 2).
                #expect(wire.status == 0)
                // Wrapped at 79 columns as curl wraps its warnings, each piece after "Warning: ".
                #expect(wire.errors == CurlWarning.text("\(config.path):3: warning: 'bogus-opt' is unknown"))
                let curl = try await peer.curl(["--no-progress-meter", "-K", config.path, peer.url("/x")])
                #expect(curl.errors == wire.errors)
                #expect(try await peer.requests().count == 2)

                let missing = folder.appendingPathComponent("missing.cfg").path
                let wireMissing = try await peer.wire(["-s", "-K", missing, peer.url("/x")])
                let curlMissing = try await peer.curl(["-K", missing, peer.url("/x")])
                #expect(wireMissing.status == 26 && curlMissing.status == 26)
                #expect(
                    wireMissing.errors
                        == "wire: (26) option -K: cannot read config from '\(missing)': No such file or directory\n")
                let curlError = curlMissing.errors.replacingOccurrences(of: "\ncurl: ", with: "")
                #expect(curlError.contains("curl: cannot read config from '\(missing)'"))
                #expect(try await peer.requests().isEmpty)
            }
        }
    }
}
