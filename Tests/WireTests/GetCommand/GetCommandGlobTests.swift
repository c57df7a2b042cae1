import Foundation
import Testing
import WireTool

/// `Resources/parallel_peer.py`: a keep-alive HTTP/1.1 server that counts the connections a client opens, the
/// requests it has in flight at once and the targets in the order they came.
struct ParallelPeer {
    /// `http://127.0.0.1:PORT`.
    let base: String

    /// What the peer saw since the last call.
    struct Stats {
        var connections: Int
        var maxInFlight: Int
        var targets: [String]
    }

    /// Runs `body` with a fresh peer and a temporary folder, removed after.
    static func with(_ body: (ParallelPeer, URL) async throws -> Void) async throws {
        let process = try TestProcess("/usr/bin/env", ["python3", "\(testResources)/parallel_peer.py"])
        defer { process.stop() }
        guard let port = Int(try await process.firstLine()) else { throw TestTimeout(seconds: 0) }
        let folder = try WireToolRunner.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(ParallelPeer(base: "http://127.0.0.1:\(port)"), folder)
    }

    /// The counts since the last call, which start afresh.
    func stats() async throws -> Stats {
        let run = try await WireToolRunner.run(program: CurlPeer.curl, ["-s", base + "/_stats"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.output)) as? [String: Any])
        return Stats(
            connections: try #require(object["connections"] as? Int),
            maxInFlight: try #require(object["max_in_flight"] as? Int),
            targets: try #require(object["targets"] as? [String]))
    }

    /// Runs `wire get` with `words`.
    func wire(_ words: [String]) async throws -> WireToolRunner.Run {
        try await WireToolRunner.run(["get"] + words)
    }

    /// Runs curl 7.88 with `words`.
    func curl(_ words: [String]) async throws -> WireToolRunner.Run {
        try await WireToolRunner.run(program: CurlPeer.curl, words)
    }
}

extension IOSuite {
    /// curl's URL globbing in `wire get`: the URLs a glob stands for, in curl's order, `#N` in `-o` names, `-g`, and
    /// malformed globs refused with exit 3 and curl's own message, each compared with what curl 7.88 does.
    @Suite struct GetCommandGlobTests {
        static func urls(_ pattern: String) throws -> [String] {
            try URLGlob(pattern).expansions.map(\.url)
        }

        @Test func rangesSetsStepsAndPaddingExpandInCurlsOrder() throws {
            #expect(
                try Self.urls("http://h/[1-2]{a,b}[x-y]") == [
                    "http://h/1ax", "http://h/1ay", "http://h/1bx", "http://h/1by",
                    "http://h/2ax", "http://h/2ay", "http://h/2bx", "http://h/2by",
                ])
            #expect(try Self.urls("http://h/[001-003]") == ["http://h/001", "http://h/002", "http://h/003"])
            #expect(try Self.urls("http://h/[08-11]") == ["http://h/08", "http://h/09", "http://h/10", "http://h/11"])
            #expect(try Self.urls("http://h/[1-10:3]") == ["http://h/1", "http://h/4", "http://h/7", "http://h/10"])
            #expect(try Self.urls("http://h/[a-k:5]") == ["http://h/a", "http://h/f", "http://h/k"])
            #expect(try Self.urls("http://h/[7-7]") == ["http://h/7"])
            #expect(try URLGlob("http://h/[1-100]{a,b,c}").count == 300)
            // Escapes stand for the characters; an IPv6 address and `[]` are not patterns.
            #expect(try Self.urls(#"http://h/\[1-2\]\{x\}"#) == ["http://h/[1-2]{x}"])
            #expect(try Self.urls(#"http://h/{x\,y,z\}}"#) == ["http://h/x,y", "http://h/z}"])
            #expect(try Self.urls("http://[::1]:8080/[1-2]") == ["http://[::1]:8080/1", "http://[::1]:8080/2"])
            #expect(try Self.urls("http://h/a[]") == ["http://h/a[]"])
            #expect(try URLGlob("http://h/plain").hasPatterns == false)
        }

        @Test func outputNamesTakeEachPatternsValue() throws {
            let expansions = Array(try URLGlob("http://h/[1-2]/{x,y}").expansions)
            let names = expansions.map { URLGlob.outputName("f_#2_#1#3#0#x#", values: $0.values) }
            #expect(names == ["f_x_1#3#0#x#", "f_y_1#3#0#x#", "f_x_2#3#0#x#", "f_y_2#3#0#x#"])
        }

        /// The malformed globs, each refused by both tools with exit 3 and the same three lines (reason and position,
        /// the URL, the caret), `curl:` read as `wire:`.
        @Test(arguments: [
            "/f[1-3", "/f[3-1]", "/f{a,b", "/f{}", "/f}", "/f]", "/f[1-3:0]", "/f[a-Z]", "/f[1-5:7]", "/f{a[1-2]}",
            "/f[-1]", "/f[x]", "/f[1-]", "/f{a,b]}", "/f[5-5:2]", "/f[1-3:]", "/f[aa-c]", "/f[a-c:]", "/{a,b}]",
            "/{a}{b}x]", "/f[99999999999999999999-1]", "/[1-2:99999999999999999999]", "/f[", "}", "/[::1]x}",
            // More URLs than 64 bits count: at a range with its position, at a set without.
            "/" + String(repeating: "[0-9]", count: 20), "/" + String(repeating: "[0-9]", count: 19) + "{a,b}",
        ])
        func malformedGlobsExit3WithCurlsMessage(_ path: String) async throws {
            // Nothing listens there: a glob that were taken would fail with 7, not 3.
            let url = path.hasPrefix("/") ? "http://127.0.0.1:1" + path : path
            let wire = try await WireToolRunner.run(["get", "-sS", url])
            let curl = try await WireToolRunner.run(program: CurlPeer.curl, ["-sS", url])
            #expect(curl.status == 3 && wire.status == 3, "\(wire.errors)")
            #expect(wire.errors == curl.errors.replacingOccurrences(of: "curl: ", with: "wire: "))
            // -s alone: the status, no line, as curl.
            let silent = try await WireToolRunner.run(["get", "-s", url])
            #expect(silent.status == 3 && silent.errors.isEmpty)
        }

        @Test func tooManyPiecesIsRefusedAsCurlRefusesIt() async throws {
            let url = "http://127.0.0.1:1/" + String(repeating: "{a}x", count: 50)
            let wire = try await WireToolRunner.run(["get", "-sS", url])
            let curl = try await WireToolRunner.run(program: CurlPeer.curl, ["-sS", url])
            #expect(wire.status == 3 && curl.status == 3)
            #expect(wire.errors == curl.errors.replacingOccurrences(of: "curl: ", with: "wire: "))
            // One piece fewer is a URL (that fails to connect).
            let fewer = try await WireToolRunner.run(["get", "-sS", "http://127.0.0.1:1/" + String(repeating: "{a}x", count: 49)])
            #expect(fewer.status == 7)
        }

        @Test func aGlobArrivesAsItsRequestsInCurlsOrder() async throws {
            try await ParallelPeer.with { peer, _ in
                let url = peer.base + "/g[1-2]/{b,a}[08-10:2]"
                let run = try await peer.wire(["-s", url])
                #expect(run.status == 0, "\(run.errors)")
                let wireTargets = try await peer.stats().targets
                let curl = try await peer.curl(["-s", url])
                #expect(curl.status == 0)
                let curlTargets = try await peer.stats().targets
                let expected = ["/g1/b08", "/g1/b10", "/g1/a08", "/g1/a10", "/g2/b08", "/g2/b10", "/g2/a08", "/g2/a10"]
                #expect(wireTargets == expected && curlTargets == expected)
                // Each body in turn on standard output, as curl writes them.
                #expect(run.output == curl.output && run.text == expected.map { $0 + "\n" }.joined())
            }
        }

        @Test func outputNamesPaddingStepsAndSetsWriteTheFilesCurlWrites() async throws {
            try await ParallelPeer.with { peer, folder in
                var listings: [String: [String: String]] = [:]
                for tool in ["wire", "curl"] {
                    let dir = folder.appendingPathComponent(tool).path
                    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
                    // One -o per URL, in order: the first URL's glob fills #1 and #2, the second writes one file
                    // again and again (the last body stays), the third has no -o and goes to standard output.
                    let words = [
                        "-s", peer.base + "/[001-005:2]/{x,y}", peer.base + "/s[a-c]", "-o", dir + "/f_#1_#2#3",
                        "-o", dir + "/same", peer.base + "/out",
                    ]
                    let run = tool == "wire" ? try await peer.wire(words) : try await peer.curl(words)
                    #expect(run.status == 0, "\(tool): \(run.errors)")
                    #expect(run.text == "/out\n", "\(tool)")
                    var files: [String: String] = [:]
                    for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
                        files[name] = String(
                            decoding: try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name)), as: UTF8.self)
                    }
                    listings[tool] = files
                }
                let expected = [
                    "f_001_x#3": "/001/x\n", "f_001_y#3": "/001/y\n", "f_003_x#3": "/003/x\n", "f_003_y#3": "/003/y\n",
                    "f_005_x#3": "/005/x\n", "f_005_y#3": "/005/y\n", "same": "/sc\n",
                ]
                #expect(listings["wire"] == expected)
                #expect(listings["curl"] == expected)
            }
        }

        @Test func remoteNameNamesEachURLOfAGlob() async throws {
            try await ParallelPeer.with { peer, folder in
                let run = try await peer.wire(["-s", "--output-dir", folder.path, "-O", peer.base + "/d/{one,two}.txt"])
                #expect(run.status == 0, "\(run.errors)")
                let one = try String(contentsOfFile: folder.path + "/one.txt", encoding: .utf8)
                let two = try String(contentsOfFile: folder.path + "/two.txt", encoding: .utf8)
                #expect(one == "/d/one.txt\n" && two == "/d/two.txt\n")
            }
        }

        @Test func globoffSendsTheURLAsWrittenAndLeavesHashesInNames() async throws {
            try await ParallelPeer.with { peer, folder in
                for tool in ["wire", "curl"] {
                    let words = ["-sg", peer.base + "/a[1-2]{x,y}", "-o", folder.path + "/\(tool)#1"]
                    let run = tool == "wire" ? try await peer.wire(words) : try await peer.curl(words)
                    #expect(run.status == 0, "\(tool): \(run.errors)")
                    #expect(try await peer.stats().targets == ["/a[1-2]{x,y}"], "\(tool)")
                    #expect(FileManager.default.fileExists(atPath: folder.path + "/\(tool)#1"), "\(tool)")
                }
                // Without -g the same URL is four requests.
                let globbed = try await peer.wire(["-s", "-o", "/dev/null", peer.base + "/a[1-2]{x,y}"])
                #expect(globbed.status == 0)
                #expect(try await peer.stats().targets == ["/a1x", "/a1y", "/a2x", "/a2y"])
            }
        }

        @Test func aMalformedGlobAfterAGoodURLEndsTheRunThere() async throws {
            try await ParallelPeer.with { peer, _ in
                let words = ["-sS", peer.base + "/first", peer.base + "/bad]", peer.base + "/never"]
                let wire = try await peer.wire(words)
                #expect(wire.status == 3 && wire.text == "/first\n")
                #expect(try await peer.stats().targets == ["/first"])
                let curl = try await peer.curl(words)
                #expect(curl.status == 3 && curl.output == wire.output)
                #expect(try await peer.stats().targets == ["/first"])
                #expect(wire.errors == curl.errors.replacingOccurrences(of: "curl: ", with: "wire: "))
            }
        }
    }
}
