import Foundation
import Testing
import WireTool

extension IOSuite {
    /// `wire get -Z`: transfers at once over one client's pool, `--parallel-max`, curl 7.88's exit status for
    /// parallel runs and `--fail-early`, observed at a server that counts connections and requests in flight.
    @Suite struct GetCommandParallelTests {
        /// Twenty URLs, four at a time. The peer holds each answer until a fifth request arrives (or 2 s pass), so
        /// a tool that runs four at once has exactly four in flight there, one that runs them one by one has one, and
        /// one that runs more than four has more; the pool opens no more than four connections and carries all twenty
        /// requests on them.
        @Test func twentyURLsFourAtATimeShareFourConnections() async throws {
            try await ParallelPeer.with { peer, folder in
                let run = try await peer.wire([
                    "-sZ", "--parallel-max", "4", "-o", folder.path + "/f#1", peer.base + "/f[1-20]?hold=5&key=a&wait=2",
                ])
                #expect(run.status == 0, "\(run.errors)")
                let stats = try await peer.stats()
                #expect(stats.maxInFlight == 4)
                #expect(stats.connections <= 4 && stats.connections >= 1, "\(stats.connections) connections")
                #expect(stats.targets.count == 20 && Set(stats.targets) == Set((1...20).map { "/f\($0)?hold=5&key=a&wait=2" }))
                for number in 1...20 {
                    let body = try String(contentsOfFile: folder.path + "/f\(number)", encoding: .utf8)
                    #expect(body == "/f\(number)?hold=5&key=a&wait=2\n")
                }
            }
        }

        /// curl's default is 50 in flight, and a --parallel-max above 300 is 300. The peer holds the first answers
        /// until one more than the limit has arrived, which never happens, so for up to `wait` seconds: long enough for
        /// a debug build on a loaded machine to open all 300 connections (2 s was not, once, in a full run).
        @Test func theDefaultIsFiftyAtOnceAndTheMostIsThreeHundred() async throws {
            try await ParallelPeer.with { peer, _ in
                let run = try await peer.wire(["-sZ", "-o", "/dev/null", peer.base + "/d[1-60]?hold=51&key=d&wait=4"])
                #expect(run.status == 0, "\(run.errors)")
                #expect(try await peer.stats().maxInFlight == 50)
                let most = try await peer.wire([
                    "-sZ", "--parallel-max", "1000", "-o", "/dev/null", peer.base + "/m[1-320]?hold=301&key=m&wait=8",
                ])
                #expect(most.status == 0, "\(most.errors)")
                #expect(try await peer.stats().maxInFlight == 300)
            }
        }

        /// -Z -w writes one line per transfer, as curl's does, each with its own URL and status, as each transfer
        /// ends; the three are answered together (the peer holds each until all three have arrived).
        @Test func writeOutWritesOneLinePerTransfer() async throws {
            try await ParallelPeer.with { peer, _ in
                let words = { (key: String) in
                    ["-sZ", "--parallel-immediate", "-w", "%{url} %{http_code} %{urlnum}\\n"]
                        + ["200", "404", "503"].map {
                            peer.base + "/s\($0)?hold=3&key=\(key)&status=\($0)"
                        }
                }
                let wire = try await peer.wire(words("w"))
                let curl = try await peer.curl(words("c"))
                #expect(wire.status == 0 && curl.status == 0, "\(wire.errors)")
                let lines = { (run: WireToolRunner.Run, key: String) in
                    // The bodies (each the target and a line end) come with the lines; keep the -w lines.
                    Set(
                        run.text.split(separator: "\n").filter { $0.hasPrefix("http") }.map {
                            $0.replacingOccurrences(of: "key=" + key, with: "key=K")
                        })
                }
                let expected = Set(
                    ["200", "404", "503"].enumerated().map { "\(peer.base)/s\($1)?hold=3&key=K&status=\($1) \($1) \($0)" })
                #expect(lines(wire, "w") == expected)
                #expect(lines(curl, "c") == expected)
                #expect(wire.text.split(separator: "\n").filter { $0.hasPrefix("http") }.count == 3)
            }
        }

        /// -Z --json-summary prints one JSON line per transfer, in the order they end, each naming its URL: a failed
        /// transfer's line too.
        @Test func jsonSummaryWritesOneLinePerTransferNamingItsURL() async throws {
            try await ParallelPeer.with { peer, _ in
                let urls = ["200", "404", "503"].map { peer.base + "/j\($0)?hold=3&key=j&status=\($0)" }
                let refused = "http://127.0.0.1:1/nothing"
                let run = try await peer.wire(["-sZ", "--json-summary"] + urls + [refused])
                #expect(run.status == 7, "\(run.errors)")
                let lines = run.text.split(separator: "\n")
                #expect(lines.count == 4)
                var statuses: [String: Int] = [:]
                for line in lines {
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    let url = try #require(object["url"] as? String)
                    statuses[url] = object["status"] as? Int ?? (object["exit_code"] as? Int).map { -$0 }
                }
                #expect(statuses == [urls[0]: 200, urls[1]: 404, urls[2]: 503, refused: -7])
            }
        }

        /// Three bodies of 300 000 bytes answered at once, each of its own letter: on standard output each comes whole,
        /// one after the other.
        @Test func standardOutputBodiesDoNotInterleave() async throws {
            try await ParallelPeer.with { peer, _ in
                let run = try await peer.wire(["-sZ", peer.base + "/{a,b,c}?hold=3&key=o&size=300000&fill=1"])
                #expect(run.status == 0, "\(run.errors)")
                #expect(run.output.count == 900_000)
                var runs: [(UInt8, Int)] = []
                for byte in run.output {
                    if let last = runs.last, last.0 == byte { runs[runs.count - 1].1 += 1 } else { runs.append((byte, 1)) }
                }
                #expect(runs.count == 3 && runs.allSatisfy { $0.1 == 300_000 }, "\(runs.count) runs")
                #expect(Set(runs.map(\.0)) == Set("abc".utf8))
            }
        }

        /// Without -Z the status is the last transfer's; with -Z, that of the last transfer to fail (a success does
        /// not clear it), as curl 7.88 decides.
        @Test func theStatusIsTheLastFailuresWithZAsCurls() async throws {
            try await ParallelPeer.with { peer, _ in
                let refused = "http://127.0.0.1:1/"
                let outputs = ["-sf", "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null"]
                #expect(try await peer.wire(outputs + [refused, peer.base + "/a", peer.base + "/b"]).status == 0)
                #expect(try await peer.curl(outputs + [refused, peer.base + "/a", peer.base + "/b"]).status == 0)
                #expect(try await peer.wire(outputs + [peer.base + "/c?status=404", peer.base + "/d", refused]).status == 7)
                // With -Z: the refusal comes at once; the two held requests answer together after it.
                for (tool, key) in [("wire", "1"), ("curl", "2")] {
                    let successLast =
                        outputs + ["-Z", refused, peer.base + "/a?hold=2&key=s\(key)", peer.base + "/b?hold=2&key=s\(key)"]
                    let run = tool == "wire" ? try await peer.wire(successLast) : try await peer.curl(successLast)
                    #expect(run.status == 7, "\(tool)")
                    // The 404 (22 with -f) ends after the refusal (7): the later failure is the status. Answered two
                    // seconds late (`after`), not only held for each other: on a loaded machine the held pair once
                    // answered before the refusal's end was processed.
                    let failureLast =
                        outputs + [
                            "-Z", peer.base + "/c?hold=2&after=2&status=404&key=f\(key)",
                            peer.base + "/d?hold=2&after=2&key=f\(key)", refused,
                        ]
                    let other = tool == "wire" ? try await peer.wire(failureLast) : try await peer.curl(failureLast)
                    #expect(other.status == 22, "\(tool)")
                }
            }
        }

        /// --fail-early: without -Z nothing after the failure is asked; with -Z, nothing more starts and the
        /// transfers in flight are cancelled (each says so, exit 42), and the status is the first failure's.
        @Test func failEarlyStopsAtTheFirstFailure() async throws {
            try await ParallelPeer.with { peer, _ in
                let refused = "http://127.0.0.1:1/"
                let serial = try await peer.wire(["-sS", "--fail-early", refused, peer.base + "/after[1-3]"])
                #expect(serial.status == 7)
                #expect(try await peer.stats().targets.isEmpty)
                let withoutIt = try await peer.wire(["-sS", "-o", "/dev/null", refused, peer.base + "/after[1-3]"])
                #expect(withoutIt.status == 0)
                #expect(try await peer.stats().targets.count == 3)
                // Two requests held for a third arrival that never comes (for 10 s): the refusal cancels them, and
                // the rest of the glob never starts.
                let parallel = try await peer.wire([
                    "-sSZ", "--fail-early", "--parallel-max", "3", refused, peer.base + "/held[1-10]?hold=3&key=e&wait=10",
                ])
                #expect(parallel.status == 7, "\(parallel.errors)")
                let lines = parallel.errors.split(separator: "\n")
                #expect(lines.first?.hasPrefix("wire: (7) ") == true, "\(parallel.errors)")
                #expect(lines.filter { $0.hasPrefix("wire: (42) ") }.count == 2, "\(parallel.errors)")
                #expect(parallel.output.isEmpty)
                #expect(try await peer.stats().targets.count <= 2)
            }
        }

        /// A malformed glob anywhere in a -Z run exits 3 before any transfer, as curl's -Z does.
        @Test func aMalformedGlobWithZFetchesNothing() async throws {
            try await ParallelPeer.with { peer, _ in
                let words = ["-sSZ", peer.base + "/first", peer.base + "/bad{", peer.base + "/last"]
                let wire = try await peer.wire(words)
                #expect(wire.status == 3 && wire.output.isEmpty)
                #expect(wire.errors.hasPrefix("wire: (3) unmatched brace in URL position "))
                let curl = try await peer.curl(words)
                #expect(curl.status == 3 && curl.output.isEmpty)
                #expect(try await peer.stats().targets.isEmpty)
            }
        }

        @Test func parallelOptionsParseAsCurlsDo() throws {
            let options = try FetchOptions(
                ["-Z", "--parallel-max", "7", "--parallel-immediate", "-g", "http://h/"], requiresMethod: false)
            #expect(options.parallel && options.parallelMax == 7 && options.parallelImmediate && options.globOff)
            #expect(try FetchOptions(["--parallel-max", "0", "http://h/"], requiresMethod: false).parallelMax == 50)
            #expect(try FetchOptions(["--parallel-max=301", "http://h/"], requiresMethod: false).parallelMax == 300)
            #expect(try FetchOptions(["-sZ", "--no-parallel", "http://h/"], requiresMethod: false).parallel == false)
            #expect(throws: FetchUsageError.self) {
                try FetchOptions(["--parallel-max", "-1", "http://h/"], requiresMethod: false)
            }
            #expect(throws: FetchUsageError.self) {
                try FetchOptions(["--parallel-max", "x", "http://h/"], requiresMethod: false)
            }
        }

        /// On a terminal (`script` gives the tool one), -Z draws curl's combined meter, ending with every transfer
        /// done and a line end; -s draws nothing.
        @Test func aTerminalShowsCurlsCombinedMeter() async throws {
            try await ParallelPeer.with { peer, _ in
                let script = URL(fileURLWithPath: "/usr/bin/script")
                let command = "'\(WireToolRunner.executable.path)' get -Z -o /dev/null '\(peer.base)/m[1-3]?size=200000'"
                let shown = try await WireToolRunner.run(program: script, ["-qec", command, "/dev/null"])
                #expect(shown.status == 0, "\(shown.text)")
                let text = shown.text.replacingOccurrences(of: "\r\n", with: "\n")
                #expect(text.hasPrefix("DL% UL%  Dled  Uled  Xfers  Live Total     Current  Left    Speed\n\r"), "\(text)")
                // The last drawing: 100%, 600000 bytes (585k), three transfers, none in flight.
                let last = try #require(text.split(separator: "\r").last)
                #expect(last.hasPrefix("100 --   585k     0     3     0  "), "\(last)")
                #expect(last.hasSuffix("     \n"), "\(last)")
                let silent = try await WireToolRunner.run(
                    program: script, ["-qec", command.replacingOccurrences(of: " -Z ", with: " -sZ "), "/dev/null"])
                #expect(silent.status == 0 && silent.output.isEmpty, "\(silent.text)")
            }
        }

        @Test func theMeterHasCurlsColumns() {
            #expect(ParallelMeter.size(99_999) == "99999" && ParallelMeter.size(100_000) == "  97k")
            #expect(ParallelMeter.size(12_900_000) == "12.3M" && ParallelMeter.size(0) == "    0")
            #expect(ParallelMeter.time(0) == "--:--:--" && ParallelMeter.time(3_725) == " 1:02:05")
            #expect(ParallelMeter.time(400_000) == "  4d 15h")
        }
    }
}
