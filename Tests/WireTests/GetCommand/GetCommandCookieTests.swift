import Foundation
import Testing
import WireTool
import Wire

/// `wire get -b` and `-c` parsing, curl's rule for `-b`'s argument.
struct CookieOptionsTests {
    @Test func anArgumentWithEqualsIsCookiesAndAnyOtherAFile() throws {
        let literal = try FetchOptions(["-b", "a=1; b=2", "http://x/"], requiresMethod: false)
        #expect(literal.cookieString == "a=1; b=2" && literal.cookieFiles.isEmpty && !literal.cookieEngine)
        let file = try FetchOptions(["--cookie", "jar.txt", "-bother.txt", "--cookie=c=3", "http://x/"], requiresMethod: false)
        #expect(file.cookieFiles == ["jar.txt", "other.txt"] && file.cookieString == "c=3" && file.cookieEngine)
        let empty = try FetchOptions(["-b", "", "http://x/"], requiresMethod: false)
        #expect(empty.cookieEngine)
        let jar = try FetchOptions(["-c", "out.txt", "http://x/"], requiresMethod: false)
        #expect(jar.cookieJar == "out.txt" && jar.cookieEngine)
        #expect(throws: FetchUsageError.self) { try FetchOptions(["--cookie-jar", "", "http://x/"], requiresMethod: false) }
    }
}

extension IOSuite {
    /// `wire get -b/-c` against `Resources/cookie_peer.py` (which echoes the `Cookie` fields it gets), and against
    /// curl reading and writing the same cookie files.
    @Suite struct GetCommandCookieTests {
        static let curl = URL(fileURLWithPath: "/usr/bin/curl")

        /// Runs `body` with a fresh cookie peer's base URL and a temporary folder.
        static func withPeer(_ body: (String, URL) async throws -> Void) async throws {
            let peer = try TestProcess("/usr/bin/env", ["python3", "\(testResources)/cookie_peer.py"])
            defer { peer.stop() }
            guard let port = Int(try await peer.firstLine()) else { throw TestTimeout(seconds: 0) }
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            try await body("http://127.0.0.1:\(port)", folder)
        }

        /// The `name=value` pairs of an echoed `Cookie` field.
        static func pairs(_ echoed: String) -> Set<String> {
            Set(echoed.dropFirst("cookie:".count).split(separator: "; ").map(String.init))
        }

        @Test func aCookieSetByARedirectIsSentOnTheNextHopAndWrittenToTheJar() async throws {
            try await Self.withPeer { base, folder in
                let jar = folder.appendingPathComponent("jar").path
                let run = try await WireToolRunner.run(["get", "-s", "-L", "-i", "-c", jar, "\(base)/redirect"])
                #expect(run.status == 0)
                #expect(run.text.hasPrefix("HTTP/1.1 302 "))
                #expect(run.text.contains("\r\n\r\nHTTP/1.1 200 "))
                #expect(run.text.hasSuffix("\r\n\r\ncookie:hop=1"))
                // A session cookie is written too, with expiry 0, as curl writes it.
                let file = try String(contentsOfFile: jar, encoding: .utf8)
                #expect(file.hasPrefix("# Netscape HTTP Cookie File\n"))
                #expect(file.contains("\n127.0.0.1\tFALSE\t/\tFALSE\t0\thop\t1\n"))
            }
        }

        @Test func withoutTheEngineRedirectsCarryNoReceivedCookies() async throws {
            try await Self.withPeer { base, _ in
                let literal = try await WireToolRunner.run(["get", "-s", "-L", "-b", "x=1; y=2", "\(base)/redirect"])
                #expect(literal.text == "cookie:x=1; y=2")
                let none = try await WireToolRunner.run(["get", "-s", "-L", "\(base)/redirect"])
                #expect(none.text == "cookie:")
            }
        }

        @Test func cookiesOfOneURLGoWithTheNextOfTheSameRun() async throws {
            try await Self.withPeer { base, _ in
                let run = try await WireToolRunner.run([
                    "get", "-s", "-b", "", "-b", "extra=1",
                    "\(base)/set-all", "\(base)/app/echo",
                ])
                #expect(
                    run.text == "cookie:extra=1"
                        + "cookie:deep06=2; plain1=1; ipdom3=3; secur4=4; htonl5=5; maxag7=7; futur8=8; extra=1")
            }
        }

        /// A file written by `wire get -c` is read by `curl -b`: both send the same `Cookie` field.
        @Test func aJarWrittenByWireGivesCurlTheSameCookieField() async throws {
            try await Self.withPeer { base, folder in
                let jar = folder.appendingPathComponent("wire-jar").path
                #expect(try await WireToolRunner.run(["get", "-s", "-c", jar, "\(base)/set-all"]).status == 0)
                #expect(try await WireToolRunner.run(["get", "-s", "-L", "-b", jar, "-c", jar, "\(base)/redirect"]).status == 0)
                let curl = try await WireToolRunner.run(program: Self.curl, ["-s", "-b", jar, "\(base)/app/echo"])
                let wire = try await WireToolRunner.run(["get", "-s", "-b", jar, "\(base)/app/echo"])
                #expect(curl.status == 0 && wire.status == 0)
                #expect(Self.pairs(curl.text).count == 8)
                #expect(wire.text == curl.text)
            }
        }

        /// A file written by `curl -c` is read by `wire get -b`: the same cookies, the longer path first (among equal
        /// paths curl orders by domain and name length, then newest first; Wire by RFC 6265's creation order).
        @Test func aJarWrittenByCurlGivesWireTheSameCookies() async throws {
            try await Self.withPeer { base, folder in
                let jar = folder.appendingPathComponent("curl-jar").path
                for path in ["/set-all", "/redirect"] {
                    let run = try await WireToolRunner.run(
                        program: Self.curl, ["-s", "-L", "-b", jar, "-c", jar, "-o", "/dev/null", "\(base)\(path)"])
                    #expect(run.status == 0)
                }
                let curl = try await WireToolRunner.run(program: Self.curl, ["-s", "-b", jar, "\(base)/app/echo"])
                let wire = try await WireToolRunner.run(["get", "-s", "-b", jar, "\(base)/app/echo"])
                #expect(Self.pairs(curl.text).count == 8)
                #expect(Self.pairs(wire.text) == Self.pairs(curl.text))
                #expect(wire.text.hasPrefix("cookie:deep06=2; ") && curl.text.hasPrefix("cookie:deep06=2; "))
            }
        }
    }
}
