import Foundation
import Testing
import Wire

extension IOSuite {
    /// `wire get --digest` and `--anyauth` beside curl 7.88, against `Resources/digest_peer.py`, which checks each
    /// Digest answer with Python's hashlib (the response hash, the uri against the request target, the nonce it
    /// issued, nc and cnonce): both get the same body and exit status.
    @Suite struct GetCommandDigestTests {
        @Test func digestAndAnyauthAnswerAsCurlDoes() async throws {
            let peer = try TestProcess("/usr/bin/env", ["python3", "\(testResources)/digest_peer.py", "alice", "s3cret"])
            defer { peer.stop() }
            let port = try #require(Int(try await peer.firstLine()))
            let base = "http://127.0.0.1:\(port)"
            // (switches and path, the body both should print)
            let cases: [([String], String)] = [
                (["--digest", "-u", "alice:s3cret", "/digest/MD5/a"], "ok digest MD5 nc=00000001 uri=/digest/MD5/a"),
                (
                    ["--digest", "-u", "alice:s3cret", "/digest/SHA-256/b?x=1"],
                    "ok digest SHA-256 nc=00000001 uri=/digest/SHA-256/b?x=1"
                ),
                (
                    ["--digest", "-u", "alice:s3cret", "/digest/SHA-256-sess/c"],
                    "ok digest SHA-256-sess nc=00000001 uri=/digest/SHA-256-sess/c"
                ),
                (
                    ["--digest", "-u", "alice:s3cret", "/digest/MD5-sess/d"],
                    "ok digest MD5-sess nc=00000001 uri=/digest/MD5-sess/d"
                ),
                (["--digest", "-u", "alice:s3cret", "/noqop/e"], "ok digest MD5 nc=- uri=/noqop/e"),
                // Basic, Digest MD5, Digest SHA-256 offered: the first Digest challenge.
                (["--digest", "-u", "alice:s3cret", "/both/f"], "ok digest MD5 nc=00000001 uri=/both/f"),
                (["--anyauth", "-u", "alice:s3cret", "/both/g"], "ok digest MD5 nc=00000001 uri=/both/g"),
                (["--anyauth", "-u", "alice:s3cret", "/basic/h"], "ok basic"),
                (
                    ["--digest", "-u", "alice:s3cret", "-d", "a=1", "/digest/SHA-256/i"],
                    "ok digest SHA-256 nc=00000001 uri=/digest/SHA-256/i"
                ),
                // Refused: the 401's body, exit 0 without -f.
                (["--digest", "-u", "alice:wrong", "/digest/MD5/j"], "denied: wrong response"),
                // --digest alone does not answer Basic; --basic beside it does (curl's switches add up); --basic
                // alone sends Basic with the first request.
                (["--digest", "-u", "alice:s3cret", "/basic/k"], "denied: basic"),
                (["--digest", "--basic", "-u", "alice:s3cret", "/basic/l"], "ok basic"),
                (["--basic", "--digest", "-u", "alice:s3cret", "/digest/MD5/m"], "ok digest MD5 nc=00000001 uri=/digest/MD5/m"),
                (["--basic", "-u", "alice:s3cret", "/digest/MD5/n"], "denied: not digest"),
            ]
            for (words, expected) in cases {
                let arguments = ["-sS"] + words.dropLast() + [base + words.last!]
                let curl = try await WireToolRunner.run(program: URL(fileURLWithPath: "/usr/bin/curl"), arguments)
                let wire = try await WireToolRunner.run(["get"] + arguments)
                #expect(String(decoding: curl.output, as: UTF8.self) == expected, "curl \(words): \(curl.errors)")
                #expect(String(decoding: wire.output, as: UTF8.self) == expected, "wire \(words): \(wire.errors)")
                #expect(curl.status == 0 && wire.status == 0, "\(words)")
            }
            // SHA-512-256 (RFC 7616): checked against hashlib here; curl 7.88 does not compute it as RFC 7616 does.
            let wire = try await WireToolRunner.run([
                "get", "-sS", "--digest", "-u", "alice:s3cret", base + "/digest/SHA-512-256/o",
            ])
            #expect(String(decoding: wire.output, as: UTF8.self) == "ok digest SHA-512-256 nc=00000001 uri=/digest/SHA-512-256/o")
        }
    }
}
