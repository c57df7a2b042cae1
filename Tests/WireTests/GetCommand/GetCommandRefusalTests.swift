import Foundation
import Testing
import WireTool

extension IOSuite {
    /// Values curl 7.88 refuses, or takes where one might expect a refusal, with `wire get`'s exit code and its
    /// one-line `wire: (N) …` beside curl's.
    @Suite struct GetCommandRefusalTests {
        /// An empty --output-dir is none (curl writes to the working directory): both take it.
        @Test func anEmptyOutputDirIsNone() async throws {
            try await CurlPeer.with { peer, folder in
                let wire = try await peer.wire(["-sS", "--output-dir", "", "-o", folder.path + "/w", peer.url("/x?body=w")])
                let curl = try await peer.curl(["-sS", "--output-dir", "", "-o", folder.path + "/c", peer.url("/x?body=c")])
                #expect(wire.status == 0 && curl.status == 0, "\(wire.errors)")
                #expect(try String(contentsOfFile: folder.path + "/w", encoding: .utf8) == "w")
                #expect(try String(contentsOfFile: folder.path + "/c", encoding: .utf8) == "c")
            }
        }

        /// `--url ""` is a URL whose transfer fails with 3, curl's words, and the next URL is still fetched.
        @Test func anEmptyURLFailsWith3() async throws {
            try await CurlPeer.with { peer, _ in
                let wire = try await peer.wire(["--url", ""])
                let curl = try await peer.curl(["--url", ""])
                #expect(wire.status == 3 && curl.status == 3)
                #expect(wire.errors == "wire: (3) URL using bad/illegal format or missing URL\n")
                #expect(curl.errors == "curl: (3) URL using bad/illegal format or missing URL\n")
                let wireThen = try await peer.wire(["-sS", "--url", "", peer.url("/x?body=ok")])
                #expect(wireThen.status == 0 && wireThen.text == "ok")
                #expect(wireThen.errors == "wire: (3) URL using bad/illegal format or missing URL\n")
                let curlThen = try await peer.curl(["-sS", "--url", "", peer.url("/x?body=ok")])
                #expect(curlThen.status == 0 && curlThen.text == "ok")
                #expect(try await peer.requests().count == 2)
            }
        }

        @Test(arguments: [
            ["--max-redirs", "abc"], ["--max-redirs", "-2"], ["--max-redirs", "1.5"],
            ["--max-filesize", "abc"], ["--max-filesize", "-1"], ["--max-filesize", "1X"],
        ])
        func aBadNumberIsAUsageError(words: [String]) async throws {
            try await CurlPeer.with { peer, _ in
                let wire = try await peer.wire(words + [peer.url("/x")])
                let curl = try await peer.curl(words + [peer.url("/x")])
                #expect(wire.status == 2 && curl.status == 2)
                #expect(wire.errors.hasPrefix("wire: (2) \(words[0]) needs ") && wire.errors.filter { $0 == "\n" }.count == 1)
                #expect(try await peer.requests().isEmpty)
            }
        }

        /// A -D file that cannot be created fails the run with 23 before any request. (curl 7.88.1, as Debian 12
        /// ships it, crashes here with SIGSEGV, so there is no code of its to compare with.)
        @Test func anUnwritableDumpHeaderFileIs23() async throws {
            try await CurlPeer.with { peer, folder in
                let path = folder.path + "/missing/head"
                let wire = try await peer.wire(["-sS", "-D", path, peer.url("/x")])
                #expect(wire.status == 23)
                #expect(wire.errors == "wire: (23) cannot create \(path) for -D\n")
                #expect(try await peer.requests().isEmpty)
            }
        }

        /// An --etag-save file that cannot be created skips the transfer with curl's warning; a run that did nothing
        /// exits 26, as curl 7.88 does ("no transfer performed").
        @Test func anUnwritableEtagSaveFileSkipsTheTransfer() async throws {
            try await CurlPeer.with { peer, folder in
                let path = folder.path + "/missing/tag"
                let words = ["--no-progress-meter", "--etag-save", path, peer.url("/x"), peer.url("/y")]
                let wire = try await peer.wire(words)
                let curl = try await peer.curl(words)
                #expect(wire.status == 26 && curl.status == 26)
                let warning = "Warning: Failed creating file for saving etags: \"\(path)\". Skip this transfer"
                #expect(wire.errors.replacingOccurrences(of: " \nWarning: ", with: " ").hasPrefix(warning + "\n"))
                #expect(wire.errors == curl.errors.replacingOccurrences(of: "curl: ", with: "wire: (26) "))
                #expect(try await peer.requests().isEmpty)
            }
        }

        /// `--oauth2-bearer ""` sends `Authorization: Bearer ` with nothing after it, as curl does.
        @Test func anEmptyBearerTokenIsSent() async throws {
            try await CurlPeer.with { peer, _ in
                let (wire, curl) = try await peer.compareHeads(["--oauth2-bearer", "", peer.url("/x")])
                #expect(wire == curl)
                #expect(wire.first?.contains("Authorization: Bearer") == true, "\(wire)")
            }
        }
    }
}
