import Foundation
import Testing

extension IOSuite {
    /// curl's defaults and quirks in `wire get`, each compared with what curl 7.88 sends to the same raw peer.
    @Suite struct GetCommandCurlDefaultsTests {
        static let date = "Sun, 06 Nov 1994 08:49:37 GMT"

        /// Words for which `wire get` must send the same request head as curl (field order included).
        static let sameHeads: [[String]] = [
            [],
            ["-H", "Accept: text/html"],
            ["-u", "a:b", "-e", "http://r/", "-H", "X-C: 1", "-d", "x=1"],
            ["-H", "User-Agent:", "-H", "X-Empty;", "-H", "Accept:"],
            ["-A", "agent/1"],
            ["-A", ""],
            ["--oauth2-bearer", "TOKEN", "-u", "a:b"],
            ["-r", "0-5"],
            ["-z", date],
            ["-z", "-" + date],
            ["-C", "5"],
        ]

        @Test(arguments: sameHeads.indices)
        func requestHeadIsCurls(_ index: Int) async throws {
            try await CurlPeer.with { peer, _ in
                let (wire, curl) = try await peer.compareHeads(Self.sameHeads[index] + [peer.url("/x?size=20&ranges=1")])
                #expect(wire.count == 1 && wire == curl, "\(wire) != \(curl)")
            }
        }

        @Test func dotSegmentsAreRemovedUnlessPathAsIs() async throws {
            try await CurlPeer.with { peer, _ in
                let (wire, curl) = try await peer.compareHeads([peer.url("/a/../b/./c/..?body=ok")])
                #expect(wire.first?.first == "GET /b/?body=ok HTTP/1.1")
                #expect(wire == curl)
                let (asIs, curlAsIs) = try await peer.compareHeads(["--path-as-is", peer.url("/a/../b/./c?body=ok")])
                #expect(asIs.first?.first == "GET /a/../b/./c?body=ok HTTP/1.1")
                #expect(asIs == curlAsIs)
            }
        }

        @Test func credentialsInTheURLAreBasicAsCurlSendsThem() async throws {
            try await CurlPeer.with { peer, _ in
                let url = peer.base.replacingOccurrences(of: "://", with: "://us%65r:p%40ss@") + "/x?body=ok"
                let (wire, curl) = try await peer.compareHeads([url])
                #expect(wire.first?.contains("Authorization: Basic " + Data("user:p@ss".utf8).base64EncodedString()) == true)
                #expect(wire == curl)
            }
        }

        @Test func silentHidesTheFailureLineAndShowErrorBringsItBack() async throws {
            let silent = try await WireToolRunner.run(["get", "-s", "http://127.0.0.1:1/"])
            #expect(silent.status == 7 && silent.errors.isEmpty)
            let shown = try await WireToolRunner.run(["get", "-sS", "http://127.0.0.1:1/"])
            #expect(shown.status == 7)
            #expect(shown.errors.hasPrefix("wire: (7) ") && shown.errors.split(separator: "\n").count == 1, "\(shown.errors)")
            let curl = try await WireToolRunner.run(program: CurlPeer.curl, ["-sS", "http://127.0.0.1:1/"])
            #expect(curl.status == shown.status && curl.errors.hasPrefix("curl: (7) "))
        }

        @Test func theExitStatusIsTheLastTransfersAndFailEarlyStopsAtTheFirstFailure() async throws {
            try await CurlPeer.with { peer, _ in
                for tool in ["wire", "curl"] {
                    func run(_ words: [String]) async throws -> WireToolRunner.Run {
                        tool == "wire" ? try await peer.wire(words) : try await peer.curl(words)
                    }
                    let lastGood = try await run(["-s", "http://127.0.0.1:1/", peer.url("/x?body=ok")])
                    #expect(lastGood.status == 0 && lastGood.text == "ok", "\(tool)")
                    let lastBad = try await run(["-s", peer.url("/x?body=ok"), "http://127.0.0.1:1/"])
                    #expect(lastBad.status == 7 && lastBad.text == "ok", "\(tool)")
                    _ = try await peer.requests()
                    let early = try await run(["-s", "--fail-early", "http://127.0.0.1:1/", peer.url("/x?body=ok")])
                    #expect(early.status == 7 && early.output.isEmpty, "\(tool)")
                    #expect(try await peer.requests().isEmpty, "\(tool): a URL after the failure was fetched")
                    let failing = try await run(["-sf", "--fail-early", peer.url("/x?status=404"), peer.url("/x?body=ok")])
                    #expect(failing.status == 22 && failing.output.isEmpty, "\(tool)")
                }
            }
        }

        @Test func xWithLocationKeepsTheMethodOnEveryHopAndWarns() async throws {
            try await CurlPeer.with { peer, _ in
                let redirect = peer.url("/r?status=302&h=Location:/x%3Fbody%3Dok")
                _ = try await peer.requests()
                let run = try await peer.wire(["-L", "-X", "POST", "-d", "a=1", redirect])
                #expect(run.status == 0 && run.text == "ok")
                #expect(run.errors.hasPrefix("Warning: -X POST is sent again at every redirect -L follows"), "\(run.errors)")
                let wire = try await peer.heads()
                _ = try await peer.curl(["-sL", "-X", "POST", "-d", "a=1", redirect])
                let curl = try await peer.heads()
                // The name stays POST, but the 302 drops the body as it would have turned the POST into a GET.
                #expect(
                    wire.map(\.first) == ["POST /r?status=302&h=Location:/x%3Fbody%3Dok HTTP/1.1", "POST /x?body=ok HTTP/1.1"])
                #expect(wire.map(\.first) == curl.map(\.first))
                // Wire frames a POST without a body with `Content-Length: 0` (RFC 9110 §8.6); curl sends no field.
                #expect(
                    !wire[1].contains { $0.hasPrefix("Content-Type") } && !wire[1].contains("Content-Length: 3"), "\(wire[1])")
                let silent = try await peer.wire(["-sL", "-X", "POST", redirect])
                #expect(silent.errors.isEmpty)
                let plain = try await peer.wire(["-sL", "-d", "a=1", redirect])
                #expect(plain.status == 0)
                #expect(
                    try await peer.heads().suffix(2).map(\.first) == [
                        "POST /r?status=302&h=Location:/x%3Fbody%3Dok HTTP/1.1", "GET /x?body=ok HTTP/1.1",
                    ])
            }
        }

        @Test func postRedirectFlagsKeepThePostAndItsBody() async throws {
            try await CurlPeer.with { peer, _ in
                for (status, flag) in [(301, "--post301"), (302, "--post302"), (303, "--post303")] {
                    let redirect = peer.url("/r?status=\(status)&h=Location:/x")
                    _ = try await peer.requests()
                    let run = try await peer.wire(["-sL", flag, "-d", "a=1", redirect])
                    #expect(run.status == 0)
                    #expect(
                        run.text.hasPrefix("POST /x HTTP/1.1\r\n") && run.text.hasSuffix("\r\n\r\na=1"), "\(flag): \(run.text)")
                    let other = try await peer.wire(["-sL", "-d", "a=1", redirect])
                    #expect(other.text.hasPrefix("GET /x HTTP/1.1\r\n"), "\(flag)")
                }
            }
        }

        @Test func locationTrustedSendsCredentialsToAnotherHost() async throws {
            try await CurlPeer.with { peer, _ in
                // 127.0.0.1 and localhost are different hosts to both tools.
                let other = peer.base.replacingOccurrences(of: "127.0.0.1", with: "localhost")
                let redirect = peer.url("/r?status=302&h=Location:\(other)/x")
                let plain = try await peer.wire(["-sL", "-u", "a:b", redirect])
                #expect(plain.status == 0 && !plain.text.contains("Authorization"), "\(plain.text)")
                let trusted = try await peer.wire(["-s", "--location-trusted", "-u", "a:b", redirect])
                #expect(trusted.text.contains("\r\nAuthorization: Basic YTpi\r\n"), "\(trusted.text)")
                #expect(trusted.text.contains("\r\nHost: localhost:"))
            }
        }

        @Test func maxRedirectsStopsTheChainWith47() async throws {
            try await CurlPeer.with { peer, _ in
                let loop = peer.url("/r?status=302&h=Location:/r%3Fstatus%3D302%26h%3DLocation:/x")
                let run = try await peer.wire(["-sSL", "--max-redirs", "1", loop])
                let curl = try await peer.curl(["-sSL", "--max-redirs", "1", loop])
                #expect(run.status == 47 && curl.status == 47)
                #expect(run.errors.hasPrefix("wire: (47) too many redirects"))
            }
        }

        @Test func usageErrorsAreOneLineInCurlsShape() async throws {
            let run = try await WireToolRunner.run(["get", "-s", "--bogus", "http://127.0.0.1:1/"])
            #expect(run.status == 2)
            #expect(run.errors == "wire: (2) unknown option '--bogus' (see 'wire get --help')\n")
            let request = try await WireToolRunner.run(["request", "http://127.0.0.1:1/"])
            #expect(request.errors == "wire: (2) wire request needs -X METHOD (see 'wire request --help')\n")
            let both = try await WireToolRunner.run(["get", "-f", "--fail-with-body", "http://127.0.0.1:1/"])
            #expect(both.status == 2 && both.errors.hasPrefix("wire: (2) choose one: -f/--fail"))
        }

        @Test func versionIsPrintedByEveryCurlSpelling() async throws {
            for words in [["get", "-V"], ["get", "--version", "http://127.0.0.1:1/"], ["--version"], ["request", "-V"]] {
                let run = try await WireToolRunner.run(words)
                #expect(run.status == 0, "\(words)")
                #expect(run.text.hasPrefix("wire 0.1 (Linux) Wire/0.1"), "\(words): \(run.text)")
                #expect(run.text.contains("\nProtocols: http https"), "\(words)")
            }
        }
    }
}
