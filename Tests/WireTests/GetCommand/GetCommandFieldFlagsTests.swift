import Foundation
import Testing

extension IOSuite {
    /// curl's error, field, authentication and condition switches in `wire get`, against the raw peer and beside
    /// curl 7.88: `--stderr`, `--url`, `--fail-with-body`, `-N`, `-q`, `-e ;auto`, netrc files, `-z`, `-r`,
    /// `--etag-save` and `--etag-compare`.
    @Suite struct GetCommandFieldFlagsTests {
        static func contents(_ path: String) -> String? {
            (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) }
        }

        /// The value of field `name` in the first head of `heads`.
        static func field(_ name: String, _ heads: [[String]]) -> String? {
            heads.first?.first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1).drop { $0 == " " }) }
        }

        @Test func stderrFileTakesTheFailureLineAndUrlAddsAURL() async throws {
            try await CurlPeer.with { peer, folder in
                let log = folder.path + "/errors.txt"
                let run = try await peer.wire(["--stderr", log, "--url", peer.url("/x?body=ok"), "http://127.0.0.1:1/"])
                #expect(run.status == 7 && run.text == "ok" && run.errors.isEmpty)
                #expect(Self.contents(log)?.hasPrefix("wire: (7) ") == true)
                let quiet = try await peer.wire(["-q", "-N", "--no-progress-meter", "-#", "--url=" + peer.url("/x?body=q")])
                #expect(quiet.status == 0 && quiet.text == "q")
            }
        }

        @Test func failWithBodyWritesTheBodyAndExits22() async throws {
            try await CurlPeer.with { peer, _ in
                let url = peer.url("/x?status=500&body=broken")
                let wire = try await peer.wire(["-sS", "--fail-with-body", url])
                let curl = try await peer.curl(["-sS", "--fail-with-body", url])
                #expect(wire.status == 22 && curl.status == 22)
                #expect(wire.text == "broken" && curl.text == "broken")
                #expect(wire.errors == "wire: (22) the requested URL returned error: 500 Internal Server Error\n")
            }
        }

        @Test func autoRefererNamesEachHopsOrigin() async throws {
            try await CurlPeer.with { peer, _ in
                let redirect = peer.url("/r?status=302&body=m&h=Location:/x")
                _ = try await peer.requests()
                _ = try await peer.wire(["-sL", "-e", "http://start/;auto", redirect])
                let wire = try await peer.requests()
                _ = try await peer.curl(["-sL", "-e", "http://start/;auto", redirect])
                let curl = try await peer.requests()
                #expect(wire.count == 2)
                #expect(wire[0].contains("\r\nReferer: http://start/\r\n"))
                #expect(wire[1].contains("\r\nReferer: \(redirect)\r\n"), "\(wire[1])")
                #expect(curl[1].contains("\r\nReferer: \(redirect)\r\n"))
            }
        }

        @Test func netrcGivesTheMachinesCredentials() async throws {
            try await CurlPeer.with { peer, folder in
                let netrc = folder.path + "/netrc"
                try Data(
                    """
                    # comment line
                    machine other.example login nobody password nothing
                    macdef init
                    machine 127.0.0.1 login fake password fake

                    machine 127.0.0.1
                      login "al ice" password "p\\"w d"
                    default login anyone password anything

                    """.utf8
                ).write(to: URL(fileURLWithPath: netrc))
                let url = peer.url("/x?body=ok")
                for words in [["--netrc-file", netrc], ["--netrc-optional", "--netrc-file", netrc]] {
                    _ = try await peer.requests()
                    let wire = try await peer.wire(["-s"] + words + [url])
                    #expect(wire.status == 0)
                    let wireHeads = try await peer.heads()
                    _ = try await peer.curl(["-s"] + words + [url])
                    let curlHeads = try await peer.heads()
                    let expected = "Basic " + Data("al ice:p\"w d".utf8).base64EncodedString()
                    #expect(Self.field("Authorization", wireHeads) == expected, "\(wireHeads)")
                    #expect(Self.field("Authorization", curlHeads) == expected)
                }
                // Another host gets the default entry; -u wins over the file.
                let localhost = url.replacingOccurrences(of: "127.0.0.1", with: "localhost")
                _ = try await peer.wire(["-s", "--netrc-file", netrc, localhost])
                #expect(
                    Self.field("Authorization", try await peer.heads()) == "Basic "
                        + Data("anyone:anything".utf8).base64EncodedString())
                _ = try await peer.wire(["-s", "--netrc-file", netrc, "-u", "u:p", url])
                #expect(Self.field("Authorization", try await peer.heads()) == "Basic dTpw")
                // A missing file is no failure (curl 7.88): the request goes without credentials.
                let missing = try await peer.wire(["-sS", "--netrc-file", folder.path + "/none", url])
                #expect(missing.status == 0)
                #expect(Self.field("Authorization", try await peer.heads()) == nil)
                // A quote left open is curl's ".netrc parser error", exit 26, and names no secret.
                try Data("machine 127.0.0.1 login a password \"secret".utf8).write(to: URL(fileURLWithPath: netrc))
                let broken = try await peer.wire(["-sS", "--netrc-file", netrc, url])
                #expect(broken.status == 26 && broken.errors.hasPrefix("wire: (26) .netrc parser error"))
                #expect(!broken.errors.contains("secret"))
            }
        }

        @Test func netrcFlagReadsTheHomeDirectorysFile() async throws {
            try await CurlPeer.with { peer, folder in
                try Data("machine 127.0.0.1 login home password h".utf8).write(to: folder.appendingPathComponent(".netrc"))
                let run = try await WireToolRunner.run(
                    program: URL(fileURLWithPath: "/usr/bin/env"),
                    ["HOME=\(folder.path)", WireToolRunner.executable.path, "get", "-s", "-n", peer.url("/x?body=ok")])
                #expect(run.status == 0)
                #expect(Self.field("Authorization", try await peer.heads()) == "Basic aG9tZTpo")
            }
        }

        @Test func timeConditionsAndEntityTagsAsCurl() async throws {
            try await CurlPeer.with { peer, folder in
                let modified = "lm=Sun,%2006%20Nov%201994%2008:49:37%20GMT"
                let later = "Mon, 07 Nov 1994 08:49:37 GMT"
                // If-Modified-Since a later date: 304, nothing written, exit 0 (curl's way).
                let notModified = try await peer.wire(["-sS", "-z", later, peer.url("/x?body=b&\(modified)")])
                #expect(notModified.status == 0 && notModified.output.isEmpty)
                let unmodified = try await peer.wire([
                    "-sS", "-z", "-Sat, 05 Nov 1994 08:49:37 GMT", peer.url("/x?body=b&\(modified)"),
                ])
                #expect(unmodified.status == 0 && unmodified.output.isEmpty)
                #expect(Self.field("If-Unmodified-Since", try await peer.heads().suffix(1)) == "Sat, 05 Nov 1994 08:49:37 GMT")
                // A file's modification time, in IMF-fixdate.
                let stamp = folder.path + "/stamp"
                _ = FileManager.default.createFile(atPath: stamp, contents: Data())
                try FileManager.default.setAttributes(
                    [.modificationDate: Date(timeIntervalSince1970: 784_111_777)], ofItemAtPath: stamp)
                _ = try await peer.requests()
                _ = try await peer.wire(["-s", "-z", stamp, peer.url("/x?body=b")])
                #expect(Self.field("If-Modified-Since", try await peer.heads()) == "Sun, 06 Nov 1994 08:49:37 GMT")
                // Neither a date nor a file: a warning (unless -s) and no condition.
                let bogus = try await peer.wire(["-z", "not a date", peer.url("/x?body=b")])
                #expect(bogus.status == 0 && bogus.errors.hasPrefix("Warning: Illegal date format for -z"))
                #expect(Self.field("If-Modified-Since", try await peer.heads()) == nil)
                // --etag-save, then --etag-compare with the saved tag: 304.
                let tagFile = folder.path + "/etag"
                let first = try await peer.wire(["-s", "--etag-save", tagFile, peer.url("/x?body=t&etag=%22v1%22")])
                #expect(first.text == "t" && Self.contents(tagFile) == "\"v1\"\n")
                _ = try await peer.requests()
                let second = try await peer.wire(["-s", "--etag-compare", tagFile, peer.url("/x?body=t&etag=%22v1%22")])
                #expect(second.status == 0 && second.output.isEmpty)
                #expect(Self.field("If-None-Match", try await peer.heads()) == "\"v1\"")
                let missing = try await peer.wire(["-sS", "--etag-compare", folder.path + "/none", peer.url("/x")])
                #expect(missing.status == 26)
            }
        }

        @Test func rangeAndOffsetAskForTheBytesCurlAsksFor() async throws {
            try await CurlPeer.with { peer, folder in
                let url = peer.url("/x?size=100&ranges=1")
                let pattern = (0..<100).map { UInt8($0 % 251) }
                let range = try await peer.wire(["-s", "-r", "10-19", url])
                #expect(range.output == Array(pattern[10...19]))
                // -C OFFSET appends the rest to the output file, as curl does.
                let path = folder.path + "/part"
                try Data(pattern[0..<40]).write(to: URL(fileURLWithPath: path))
                let resumed = try await peer.wire(["-sS", "-C", "40", "-o", path, url])
                #expect(resumed.status == 0, "\(resumed.errors)")
                #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == pattern)
                let ignored = try await peer.wire(["-sS", "-C", "40", peer.url("/x?size=100")])
                #expect(ignored.status == 33)
            }
        }

        /// curl 7.88's loose -r: a number without a dash gets one (`500` asks for `bytes=500-`), other characters are
        /// sent as given, each with curl's warning, wrapped as curl wraps it; a start past 64 bits is a usage error.
        @Test(arguments: ["500", "0500", "500x", "abc", "1-2,x", "5 -", "-500", "", "long 7"])
        func aLooseRangeIsSentAsCurlSendsIt(value: String) async throws {
            try await CurlPeer.with { peer, _ in
                let words = value.hasPrefix("long ") ? ["--range", String(value.dropFirst(5))] : ["-r", value]
                let url = peer.url("/x?body=ok")
                _ = try await peer.requests()
                let wire = try await peer.wire(["--no-progress-meter"] + words + ["-o", "/dev/null", url])
                let wireRange = Self.field("Range", try await peer.heads())
                let curl = try await peer.curl(["--no-progress-meter"] + words + ["-o", "/dev/null", url])
                let curlRange = Self.field("Range", try await peer.heads())
                #expect(wire.status == 0 && curl.status == 0, "\(wire.errors)")
                #expect(wireRange != nil && wireRange == curlRange, "\(String(describing: wireRange))")
                #expect(wire.errors == curl.errors)
            }
        }

        @Test func aRangeStartPast64BitsIsAUsageErrorAsInCurl() async throws {
            try await CurlPeer.with { peer, _ in
                let words = ["-r", "99999999999999999999999", peer.url("/x")]
                let wire = try await peer.wire(words)
                let curl = try await peer.curl(words)
                #expect(wire.status == 2 && curl.status == 2)
                #expect(wire.errors.hasPrefix("wire: (2) option -r: is badly used here"))
                #expect(try await peer.requests().isEmpty)
            }
        }
    }
}

extension IOSuite {
    /// `--max-filesize` and `--form-string`, beside curl 7.88.
    @Suite struct GetCommandLimitFlagsTests {
        @Test func maxFilesizeRefusesALargerAnnouncedBodyWith63() async throws {
            try await CurlPeer.with { peer, folder in
                let path = folder.path + "/big"
                let wire = try await peer.wire(["-sS", "--max-filesize", "1k", "-o", path, peer.url("/x?size=2000")])
                let curl = try await peer.curl(["-sS", "--max-filesize", "1k", peer.url("/x?size=2000")])
                #expect(wire.status == 63 && curl.status == 63)
                #expect(wire.errors.hasPrefix("wire: (63) maximum file size exceeded"))
                #expect(!FileManager.default.fileExists(atPath: path))
                let fits = try await peer.wire(["-s", "--max-filesize", "2000", peer.url("/x?size=2000")])
                #expect(fits.status == 0 && fits.output.count == 2000)
                // A chunked body has no announced length: curl 7.88 does not limit it.
                let chunked = try await peer.wire(["-s", "--max-filesize", "10", peer.url("/x?size=2000&chunked=1")])
                #expect(chunked.status == 0 && chunked.output.count == 2000)
            }
        }

        @Test func formStringSendsAtAndAngleAsText() async throws {
            try await CurlPeer.with { peer, _ in
                let words = ["--form-string", "a=@not-a-file", "--form-string", "b=<x;type=y"]
                let wire = try await peer.wire(["-s"] + words + [peer.url("/x")])
                #expect(wire.status == 0)
                #expect(wire.text.contains("name=\"a\"\r\n\r\n@not-a-file\r\n"), "\(wire.text)")
                #expect(wire.text.contains("name=\"b\"\r\n\r\n<x;type=y\r\n"))
                let curl = try await peer.curl(["-s"] + words + [peer.url("/x")])
                #expect(curl.text.contains("name=\"a\"\r\n\r\n@not-a-file\r\n"))
            }
        }
    }
}
