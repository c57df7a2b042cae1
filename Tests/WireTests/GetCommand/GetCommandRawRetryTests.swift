import Foundation
import Testing

extension IOSuite {
    /// `--raw`, `-j`/`--junk-session-cookies` and what `--retry` writes of the attempts it retries, beside curl 7.88
    /// at the same recording peer.
    @Suite struct GetCommandRawRetryTests {
        @Test func rawWritesTheChunkedBodyAsItCame() async throws {
            try await CurlPeer.with { peer, _ in
                for words in [["--raw"], ["--raw", "-i"], ["--no-raw", "--raw"]] {
                    let url = peer.url("/x?body=hello%20raw&chunked=1")
                    let wire = try await peer.wire(["-sS"] + words + [url])
                    let curl = try await peer.curl(["-sS"] + words + [url])
                    #expect(wire.status == 0, "\(wire.errors)")
                    #expect(wire.text.hasSuffix("9\r\nhello raw\r\n0\r\n\r\n"), "\(wire.text)")
                    #expect(wire.output == curl.output, "\(words)")
                }
                // Without it (or with --no-raw last) the data alone, as before; a Content-Length body is the same either way.
                for words in [[], ["--raw", "--no-raw"]] {
                    let decoded = try await peer.wire(["-sS"] + words + [peer.url("/x?body=hello%20raw&chunked=1")])
                    #expect(decoded.text == "hello raw")
                }
                let plain = try await peer.wire(["-sS", "--raw", peer.url("/x?body=plain")])
                #expect(plain.text == "plain")
            }
        }

        @Test func junkSessionCookiesDropsTheFilesSessionCookies() async throws {
            try await CurlPeer.with { peer, folder in
                let file = folder.appendingPathComponent("cookies.txt")
                try Data(
                    ("127.0.0.1\tFALSE\t/\tFALSE\t0\tsess\tA\n" + "127.0.0.1\tFALSE\t/\tFALSE\t4102444800\tkept\tB\n").utf8
                ).write(to: file)
                for words in [["-b", file.path], ["-j", "-b", file.path], ["--junk-session-cookies", "-b", file.path]] {
                    let (wire, curl) = try await peer.compareHeads(words + [peer.url("/x?body=ok")])
                    #expect(wire.count == 1 && wire == curl, "\(words): \(wire) != \(curl)")
                    let cookie = wire.first?.first { $0.hasPrefix("Cookie:") }
                    // (Names of one length: Wire's engine orders cookies as curl does for those.)
                    #expect(words.count == 2 ? cookie?.contains("sess=A") == true : cookie == "Cookie: kept=B", "\(words)")
                }
                // The jar then holds what the engine kept: the persistent cookie, and a session cookie of this run.
                for tool in ["wire", "curl"] {
                    let jar = folder.appendingPathComponent("\(tool).jar")
                    let words = ["-s", "-j", "-b", file.path, "-c", jar.path, peer.url("/x?body=ok&h=Set-Cookie:fresh=1")]
                    let run = tool == "wire" ? try await peer.wire(words) : try await peer.curl(words)
                    #expect(run.status == 0, "\(run.errors)")
                    let lines = try String(contentsOf: jar, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
                    #expect(
                        Set(lines.map { $0.split(separator: "\t").suffix(2).joined(separator: "=") }) == ["kept=B", "fresh=1"],
                        "\(tool)")
                }
            }
        }

        @Test func retryWritesEachFailedAttemptAsCurlDoes() async throws {
            try await CurlPeer.with { peer, folder in
                var key = 0
                /// Runs `words` with a fresh key for both tools: the first request of each fails with 503, the next
                /// succeeds.
                func both(_ words: [String]) async throws -> (wire: WireToolRunner.Run, curl: WireToolRunner.Run) {
                    key += 1
                    let url = peer.url("/x?body=good&fail=1&key=w\(key)")
                    let wire = try await peer.wire(["--retry", "1", "--retry-delay", "1"] + words + [url])
                    let curl = try await peer.curl(
                        ["--retry", "1", "--retry-delay", "1"] + words + [url.replacingOccurrences(of: "key=w", with: "key=c")])
                    return (wire, curl)
                }
                // Standard output: the failed attempt's body, then the good one.
                let stdout = try await both(["-s"])
                #expect(stdout.wire.status == 0 && stdout.wire.text == "fail 1\ngood", "\(stdout.wire.errors)")
                #expect(stdout.wire.output == stdout.curl.output)
                // With -i: each attempt's head and body.
                let included = try await both(["-si"])
                #expect(included.wire.output == included.curl.output, "\(included.wire.text)")
                #expect(included.wire.text.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
                // A file: the failed body is written, then thrown away with curl's note; the file ends with the good body.
                let files = (wire: folder.appendingPathComponent("wire.out"), curl: folder.appendingPathComponent("curl.out"))
                key += 1
                let url = peer.url("/x?body=good&fail=1&key=f\(key)")
                let toFiles = (
                    wire: try await peer.wire(["--retry", "1", "--retry-delay", "1", "-o", files.wire.path, url]),
                    curl: try await peer.curl(["--retry", "1", "--retry-delay", "1", "-o", files.curl.path, url + "c"])
                )
                for (tool, file, run) in [("wire", files.wire, toFiles.wire), ("curl", files.curl, toFiles.curl)] {
                    #expect(run.status == 0, "\(run.errors)")
                    #expect(try String(contentsOf: file, encoding: .utf8) == "good", "\(tool)")
                    let lines = run.errors.split(separator: "\n").filter { $0.hasPrefix("Warning: ") || $0.hasPrefix("Throwing") }
                    #expect(
                        lines == [
                            "Warning: Problem : HTTP error. Will retry in 1 seconds. 1 retries left.", "Throwing away 7 bytes",
                        ],
                        "\(tool): \(run.errors)")
                }
                // Retries used up: the last failed body is the answer, and the exit status 0, as in curl 7.88.
                key += 1
                let exhausted = try await peer.wire([
                    "-s", "--retry", "1", "--retry-delay", "1", peer.url("/x?body=good&fail=2&key=e\(key)"),
                ])
                #expect(exhausted.status == 0 && exhausted.text == "fail 1\nfail 2\n", "\(exhausted.errors)")
                // With -f nothing of a failed attempt is written.
                let failing = try await both(["-sf"])
                #expect(failing.wire.text == "good" && failing.curl.text == "good")
            }
        }
    }
}
