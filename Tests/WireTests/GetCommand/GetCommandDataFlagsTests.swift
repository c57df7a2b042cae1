import Foundation
import Testing
import WireTool

extension IOSuite {
    /// `--data-urlencode`, `-G`, `--json`, `--data-raw`, `-u` and `-T` as curl has them: the same command sent by
    /// curl and by wire reaches Python's server as the same method, target, fields and body.
    @Suite struct GetCommandDataFlagsTests {
        /// What the peer's `/inspect` saw, from curl and from wire, for the same words (both send `Accept: */*`).
        static func both(_ words: [String], base: String, path: String = "/inspect") async throws -> (wire: String, curl: String)
        {
            let wire = try await WireToolRunner.run(["get", "-s"] + words + [base + path])
            #expect(wire.status == 0, "\(words): \(wire.errors)")
            let curl = try await WireToolRunner.run(
                program: URL(fileURLWithPath: "/usr/bin/curl"), ["-s"] + words + [base + path])
            #expect(curl.status == 0, "\(words): curl \(curl.status)")
            return (wire.text, curl.text)
        }

        @Test func dataFlagsReachTheServerAsCurlsDo() async throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let text = folder.appendingPathComponent("note.txt")
            try Data("two lines\nand ünïcode & more=\n".utf8).write(to: text)
            let json = folder.appendingPathComponent("doc.json")
            try Data(#"{"b": [1, 2]}"#.utf8).write(to: json)
            let cases: [[String]] = [
                ["--data-urlencode", "plain text & stuff", "--data-urlencode", "=lead=ing", "--data-urlencode", "name=a b/c?é"],
                ["--data-urlencode", "@\(text.path)", "--data-urlencode", "file@\(text.path)", "-d", "raw=1 2"],
                ["-G", "-d", "q=1", "--data-urlencode", "w=x y"],
                ["--json", #"{"a":1}"#, "--json", "@\(json.path)"],
                ["--json", "[]", "-H", "Accept: text/plain"],
                ["--data-raw", "@not-a-file"],
                ["-u", "alice:s3cr:et"],
                ["-u", "bob:", "-H", "Authorization: Bearer t"],
                ["-T", text.path],
                ["-T", text.path, "-X", "POST"],
            ]
            try await GetCommandPeerTests.withPeer { base in
                for words in cases {
                    let (wire, curl) = try await Self.both(words, base: base)
                    #expect(wire == curl, "\(words)")
                }
                // A query already in the URL: -G adds to it with '&'.
                let (wire, curl) = try await Self.both(["-G", "-d", "b=2"], base: base, path: "/inspect?a=1")
                #expect(wire == curl)
                #expect(wire.hasPrefix("GET /inspect?a=1&b=2\n"))
                // -T to a URL ending in '/': the file's name is appended.
                let upload = try await Self.both(["-T", json.path], base: base, path: "/inspect/")
                #expect(upload.wire == upload.curl)
                #expect(upload.wire.hasPrefix("PUT /inspect/doc.json\n"))
            }
        }

        /// `--data-ascii` is `-d`: the same bytes arrive from both tools, `@file` read with its line ends removed, and
        /// several joined by `&`.
        @Test func dataAsciiSendsWhatCurlSends() async throws {
            try await CurlPeer.with { peer, folder in
                let file = folder.appendingPathComponent("form.txt")
                try Data("one=1\r\ntwo=2 & ü\nend\n".utf8).write(to: file)
                let words = [
                    "--data-ascii", "a b&c=é", "--data-ascii", "@\(file.path)", "--data-ascii", "", peer.url("/x?body=ok"),
                ]
                _ = try await peer.requests()
                let wire = try await peer.wire(["-sS"] + words)
                let wireSent = try await peer.requests()
                let curl = try await peer.curl(["-sS"] + words)
                let curlSent = try await peer.requests()
                #expect(wire.status == 0 && curl.status == 0, "\(wire.errors)")
                let body = { (sent: [String]) in
                    sent.first?.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
                }
                #expect(body(wireSent) != nil && body(wireSent) == body(curlSent))
                // The peer shows each byte as one code point: é and ü are their two UTF-8 bytes.
                #expect(body(curlSent) == "a b&c=\u{c3}\u{a9}&one=1two=2 & \u{c3}\u{bc}end&")
                let (wireHeads, curlHeads) = try await peer.compareHeads(words)
                #expect(wireHeads == curlHeads)
            }
        }

        @Test func encodingIsCurls() throws {
            #expect(RequestBuilder.percentEncoded(Array("a b&c=d/é~-._".utf8)) == "a%20b%26c%3Dd%2F%C3%A9~-._")
            #expect(try RequestBuilder.urlEncoded("=x y") == "x+y")
            #expect(try RequestBuilder.urlEncoded("n=x=y") == "n=x%3Dy")
            // name@file: 'y' names a file, missing here.
            #expect(throws: TransferFailure.self) { try RequestBuilder.urlEncoded("x@y") }
        }

        @Test func unreadableUploadExits26AndBadCombinationsAreUsageErrors() async throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            for words in [
                ["-T", "\(folder.path)/missing.bin"], ["-T", folder.path],
                ["--data-urlencode", "n@\(folder.path)/missing.txt"], ["--json", "@\(folder.path)/missing.json"],
            ] {
                // Port 1 refuses connections: 26 means the file was checked before any connection was tried.
                let run = try await WireToolRunner.run(["get", "-s"] + words + ["http://127.0.0.1:1/"])
                #expect(run.status == 26, "\(words): \(run.errors)")
            }
            for words in [
                ["--json", "{}", "-d", "a=1"], ["-G", "-F", "a=1"], ["-T", "f", "-d", "a=1"], ["-T", "f", "-F", "a=1"],
                ["-G", "-d", "a=1", "-T", "f"],
                ["-u", "nocolon"],
            ] {
                let run = try await WireToolRunner.run(["get", "-s"] + words + ["http://127.0.0.1:1/"])
                #expect(run.status == 2, "\(words): \(run.errors)")
            }
        }
    }
}
