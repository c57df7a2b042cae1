import Foundation
import Testing
import WireTool

extension IOSuite {
    /// curl's output switches in `wire get`: `-O`, `-J`, `--remote-name-all`, `--output-dir`, `--create-dirs`,
    /// `--remove-on-error`, `-D` and `-R`, with the files they write compared with curl's.
    @Suite struct GetCommandOutputFlagsTests {
        static func contents(_ path: String) -> String? {
            (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) }
        }

        /// Runs `words` with `wire get` and curl, each in a folder of its own as the working directory (`cd` by
        /// `--output-dir`), and returns the two folders.
        static func bothTools(
            _ peer: CurlPeer, in folder: URL, _ words: (String) -> [String]
        ) async throws -> (wire: WireToolRunner.Run, curl: WireToolRunner.Run) {
            let wireFolder = folder.appendingPathComponent("wire").path
            let curlFolder = folder.appendingPathComponent("curl").path
            try FileManager.default.createDirectory(atPath: wireFolder, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: curlFolder, withIntermediateDirectories: true)
            return (try await peer.wire(words(wireFolder)), try await peer.curl(words(curlFolder)))
        }

        @Test func remoteNameIsTheURLsLastSegmentAsWritten() async throws {
            try await CurlPeer.with { peer, folder in
                let (wire, curl) = try await Self.bothTools(peer, in: folder) { dir in
                    ["-sS", "--output-dir", dir, "-O", peer.url("/a/b%20c.txt?body=one"), "-o", "named", peer.url("/x?body=two")]
                }
                #expect(wire.status == 0 && curl.status == 0, "\(wire.errors)")
                for tool in ["wire", "curl"] {
                    let dir = folder.appendingPathComponent(tool).path
                    #expect(Self.contents(dir + "/b%20c.txt") == "one", "\(tool)")
                    #expect(Self.contents(dir + "/named") == "two", "\(tool)")
                }
            }
        }

        @Test func remoteNameAllSavesEveryURLWithoutAnOutput() async throws {
            try await CurlPeer.with { peer, folder in
                let dir = folder.path
                let run = try await peer.wire([
                    "-s", "--output-dir", dir, "--remote-name-all", "-o", "first", peer.url("/one?body=1"),
                    peer.url("/two?body=2"),
                ])
                #expect(run.status == 0 && run.output.isEmpty)
                #expect(Self.contents(dir + "/first") == "1" && Self.contents(dir + "/two") == "2")
                #expect(Self.contents(dir + "/one") == nil)
            }
        }

        @Test func remoteNameOfADirectoryURLExits23BeforeAnyRequest() async throws {
            try await CurlPeer.with { peer, folder in
                _ = try await peer.requests()
                let run = try await peer.wire(["-sS", "--output-dir", folder.path, "-O", peer.url("/dir/")])
                let curl = try await peer.curl(["-sS", "--output-dir", folder.path, "-O", peer.url("/dir/")])
                #expect(run.status == 23 && curl.status == 23)
                #expect(run.errors.hasPrefix("wire: (23) remote file name has no length"))
                // Neither tool asks the server.
                #expect(try await peer.requests().isEmpty)
            }
        }

        @Test func remoteHeaderNameKeepsOnlyTheFileNameAndNeverOverwrites() async throws {
            try await CurlPeer.with { peer, folder in
                let disposition = "h=Content-Disposition:attachment;%20filename=%22../../evil.txt%22"
                let (wire, curl) = try await Self.bothTools(peer, in: folder) { dir in
                    ["-sS", "--output-dir", dir, "-OJ", peer.url("/a/b?body=first&\(disposition)")]
                }
                #expect(wire.status == 0 && curl.status == 0, "\(wire.errors)")
                for tool in ["wire", "curl"] {
                    let dir = folder.appendingPathComponent(tool).path
                    #expect(Self.contents(dir + "/evil.txt") == "first", "\(tool)")
                    #expect(Self.contents(dir + "/b") == nil, "\(tool)")
                }
                #expect(
                    Self.contents(folder.path + "/evil.txt") == nil
                        && Self.contents(folder.deletingLastPathComponent().path + "/evil.txt") == nil)
                let (again, curlAgain) = try await Self.bothTools(peer, in: folder) { dir in
                    ["-sS", "--output-dir", dir, "-OJ", peer.url("/a/b?body=second&\(disposition)")]
                }
                #expect(again.status == 23 && curlAgain.status == 23)
                #expect(again.errors.contains("File exists"), "\(again.errors)")
                #expect(Self.contents(folder.path + "/wire/evil.txt") == "first")
                // Without Content-Disposition, -J keeps -O's name.
                let plain = try await peer.wire(["-s", "--output-dir", folder.path + "/wire", "-OJ", peer.url("/plain?body=p")])
                #expect(plain.status == 0 && Self.contents(folder.path + "/wire/plain") == "p")
            }
        }

        @Test(arguments: [
            "attachment; filename=\"report.pdf\"", "inline; FILENAME=a.txt; size=3",
            "attachment; filename=\"C:\\\\dir\\\\x.bin\"",
            "attachment; filename=\"..\"", "attachment", "attachment; filename=\"/etc/passwd\"",
        ])
        func dispositionNames(_ value: String) {
            let expected: [String: String?] = [
                "attachment; filename=\"report.pdf\"": "report.pdf", "inline; FILENAME=a.txt; size=3": "a.txt",
                "attachment; filename=\"C:\\\\dir\\\\x.bin\"": "x.bin", "attachment; filename=\"..\"": nil, "attachment": nil,
                "attachment; filename=\"/etc/passwd\"": "passwd",
            ]
            #expect(OutputFile.dispositionName(value) == expected[value]!)
        }

        @Test func createDirsMakesTheMissingDirectoriesAsCurlDoes() async throws {
            try await CurlPeer.with { peer, folder in
                let (wire, curl) = try await Self.bothTools(peer, in: folder) { dir in
                    ["-sS", "--create-dirs", "--output-dir", dir + "/out", "-o", "a/b/c", peer.url("/x?body=deep")]
                }
                #expect(wire.status == 0 && curl.status == 0, "\(wire.errors)")
                for tool in ["wire", "curl"] {
                    let dir = folder.appendingPathComponent(tool).path + "/out"
                    #expect(Self.contents(dir + "/a/b/c") == "deep", "\(tool)")
                    let mode = try FileManager.default.attributesOfItem(atPath: dir + "/a")[.posixPermissions] as? Int
                    #expect(mode == 0o750, "\(tool)")
                }
                let missing = try await peer.wire(["-sS", "-o", folder.path + "/none/x", peer.url("/x?body=1")])
                #expect(missing.status == 23)
            }
        }

        @Test func removeOnErrorRemovesTheFileOfAFailedTransfer() async throws {
            try await CurlPeer.with { peer, folder in
                let path = folder.path + "/error.html"
                let kept = try await peer.wire(["-s", "--fail-with-body", "-o", path, peer.url("/x?status=404&body=missing")])
                #expect(kept.status == 22 && Self.contents(path) == "missing")
                try FileManager.default.removeItem(atPath: path)
                let removed = try await peer.wire([
                    "-s", "--fail-with-body", "--remove-on-error", "-o", path, peer.url("/x?status=404&body=missing"),
                ])
                #expect(removed.status == 22 && Self.contents(path) == nil)
                let curl = try await peer.curl([
                    "-s", "--fail-with-body", "--remove-on-error", "-o", path, peer.url("/x?status=404&body=missing"),
                ])
                #expect(curl.status == 22 && Self.contents(path) == nil)
            }
        }

        @Test func dumpHeaderWritesEveryHeadToAFileOrStandardOutput() async throws {
            try await CurlPeer.with { peer, folder in
                let redirect = peer.url("/r?status=302&body=moved&h=Location:/x%3Fbody%3Dok")
                let (wire, curl) = try await Self.bothTools(peer, in: folder) { dir in
                    ["-sL", "-D", dir + "/heads", redirect]
                }
                #expect(wire.text == "ok" && curl.text == "ok")
                let wireHeads = try #require(Self.contents(folder.path + "/wire/heads"))
                let curlHeads = try #require(Self.contents(folder.path + "/curl/heads"))
                #expect(wireHeads.hasPrefix("HTTP/1.1 302 Found\r\nLocation: /x?body=ok\r\n"))
                #expect(wireHeads == curlHeads)
                let toOutput = try await peer.wire(["-s", "-D", "-", "-o", folder.path + "/body", peer.url("/x?body=b")])
                #expect(toOutput.text == "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n")
                #expect(Self.contents(folder.path + "/body") == "b")
            }
        }

        @Test func remoteTimeSetsTheFilesTimeToLastModified() async throws {
            try await CurlPeer.with { peer, folder in
                let path = folder.path + "/dated"
                let run = try await peer.wire([
                    "-sR", "-o", path, peer.url("/x?body=d&lm=Sun,%2006%20Nov%201994%2008:49:37%20GMT"),
                ])
                #expect(run.status == 0)
                let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
                #expect(modified?.timeIntervalSince1970 == 784_111_777)
            }
        }
    }
}
