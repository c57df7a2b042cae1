import Foundation
import Testing
import WireTestSupport

extension IOSuite {
    /// curl's TCP and pacing switches in `wire get`, beside curl 7.88 at the same recording peer: keep-alive probes
    /// (`--keepalive-time`, `--no-keepalive`), `--tcp-nodelay`, `Expect: 100-continue` and `--expect100-timeout`,
    /// and `--limit-rate` each way.
    @Suite struct GetCommandTransportTests {
        /// The `timer:(keepalive,…)` part of the peer's `ss` line about the client's socket, or nil.
        static func keepAliveTimer(_ report: String) -> String? {
            guard let range = report.range(of: "timer:(keepalive,") else { return nil }
            return String(report[range.upperBound...].prefix { $0 != "," })
        }

        @Test func keepAliveProbesAreOnAsInCurlAndFollowKeepaliveTime() async throws {
            try await CurlPeer.with { peer, _ in
                for words in [[], ["--keepalive-time", "17"], ["--no-keepalive"], ["--no-keepalive", "--keepalive"]] {
                    let wire = try await peer.wire(["-sS"] + words + [peer.url("/x?socket=1")])
                    let curl = try await peer.curl(["-sS"] + words + [peer.url("/x?socket=1")])
                    #expect(wire.status == 0 && wire.text.hasPrefix("ESTAB"), "\(wire.errors) \(wire.text)")
                    // The timer counts down from the idle time: 60 s by default (ss writes "1min" or "59sec"), 17 s
                    // here; none without keep-alive.
                    let timer = Self.keepAliveTimer(wire.text)
                    switch words.first {
                    case nil,
                        "--no-keepalive" where words.count == 2:
                        #expect(timer == "1min" || timer == "59sec", "\(wire.text)")
                    case "--keepalive-time":
                        #expect(timer == "17sec" || timer == "16sec", "\(wire.text)")
                    default:
                        #expect(timer == nil, "\(wire.text)")
                    }
                    #expect((timer == nil) == (Self.keepAliveTimer(curl.text) == nil), "\(words): curl \(curl.text)")
                }
            }
        }

        @Test(arguments: [
            ["--keepalive-time", "1.5"], ["--keepalive-time", "-1"], ["--keepalive-time", "x"], ["--expect100-timeout", "-1"],
            ["--expect100-timeout", "soon"], ["--limit-rate", "1x"], ["--limit-rate", "1.5k"], ["--limit-rate", "-5"],
            ["--limit-rate", "k"], ["--limit-rate", "1T"],
        ])
        func badValuesAreUsageErrorsAsInCurl(_ words: [String]) async throws {
            let wire = try await WireToolRunner.run(["get", "-s"] + words + ["http://127.0.0.1:1/"])
            let curl = try await WireToolRunner.run(program: CurlPeer.curl, ["-s"] + words + ["http://127.0.0.1:1/"])
            #expect(curl.status == 2)
            #expect(wire.status == 2 && wire.errors.hasPrefix("wire: (2) "), "\(wire.errors)")
        }

        @Test func tcpNoDelaySwitchesAreTaken() async throws {
            try await CurlPeer.with { peer, _ in
                for words in [["--tcp-nodelay"], ["--no-tcp-nodelay"], ["--no-tcp-nodelay", "--tcp-nodelay"]] {
                    let (wire, curl) = try await peer.compareHeads(words + [peer.url("/x?body=ok")])
                    #expect(wire.count == 1 && wire == curl)
                }
            }
        }

        @Test func uploadsAskForContinueAsCurl788Does() async throws {
            try await CurlPeer.with { peer, folder in
                func file(_ name: String, _ size: Int) throws -> String {
                    let url = folder.appendingPathComponent(name)
                    try Data(repeating: 0x61, count: size).write(to: url)
                    return url.path
                }
                let small = try file("small", 2000)
                let empty = try file("empty", 0)
                let mebibyte = try file("mebibyte", 1 << 20)
                let more = try file("more", (1 << 20) + 1)
                // -T asks whatever the size (an empty file excepted); a POST only above 1 MiB; -H 'Expect:' never.
                for (words, asks) in [
                    (["-T", small], true), (["-T", empty], false), (["-X", "POST", "-T", small], true),
                    (["--data-binary", "@" + mebibyte], false), (["--data-binary", "@" + more], true),
                    (["-F", "f=@" + more], true), (["-H", "Expect:", "-T", small], false),
                ] {
                    let (wire, curl) = try await peer.compareHeads(words + [peer.url("/x?body=ok")])
                    #expect(wire.count == 1 && wire == curl || words.first == "-F", "\(words): \(wire) != \(curl)")
                    #expect(wire.first?.contains("Expect: 100-continue") == asks, "\(words)")
                }
            }
        }

        @Test func expect100TimeoutSetsTheWaitForAServerThatNeverAnswers100() async throws {
            try await CurlPeer.with { peer, folder in
                let file = folder.appendingPathComponent("up.bin")
                try Data(repeating: 0x62, count: 3000).write(to: file)
                for (timeout, atLeast, below) in [("0.3", 0.3, 0.95), ("1.5", 1.5, 10.0)] {
                    let started = Date()
                    let run = try await peer.wire(
                        ["-sS", "--expect100-timeout", timeout, "-T", file.path, peer.url("/x?body=ok&expect=none")])
                    let took = Date().timeIntervalSince(started)
                    #expect(run.status == 0 && run.text == "ok", "\(run.errors)")
                    #expect(took >= atLeast && took < below, "--expect100-timeout \(timeout) took \(took) s")
                    // The body went out after the wait.
                    let request = try #require(try await peer.requests().first)
                    #expect(request.hasSuffix(String(repeating: "b", count: 3000)))
                }
            }
        }

        @Test func limitRateHoldsTheDownloadAndLeavesTheRestWithTheSender() async throws {
            try await CurlPeer.with { peer, _ in
                // 1 MiB at 512 KiB/s: about 2 s.
                let started = Date()
                let run = try await peer.wire(["-sS", "--limit-rate", "512K", peer.url("/x?size=1048576&pace=1")])
                let took = Date().timeIntervalSince(started)
                #expect(run.status == 0 && run.output.count == 1_048_576, "\(run.errors)")
                #expect(took >= 1.5, "took \(took) s")
                // Just after the peer handed its answer to the kernel, most of it still waited unread on the client's
                // side: the client took it only as the limit allowed (a sleep after reading would leave nothing).
                var record: [Double] = []
                // The peer records it once the ss call about the connection returns, which may be after wire is done.
                let recorded = try await eventually {
                    let times = try await WireToolRunner.run(program: CurlPeer.curl, ["-s", peer.url("/_sendtimes")])
                    record = (try JSONSerialization.jsonObject(with: Data(times.output)) as? [[Double]])?.first ?? []
                    return !record.isEmpty
                }
                #expect(recorded)
                let unread = try #require(record.last)
                #expect(unread >= 200_000 || record[0] >= 0.5, "unread \(unread) bytes, send took \(record[0]) s")
            }
        }

        @Test func limitRateHoldsTheUploadToo() async throws {
            try await CurlPeer.with { peer, folder in
                let file = folder.appendingPathComponent("up.bin")
                try Data(repeating: 0x63, count: 200_000).write(to: file)
                for words in [["-T", file.path], ["--data-binary", "@" + file.path]] {
                    let started = Date()
                    let run = try await peer.wire(["-sS", "--limit-rate", "100K"] + words + [peer.url("/x?body=ok")])
                    let took = Date().timeIntervalSince(started)
                    #expect(run.status == 0 && run.text == "ok", "\(run.errors)")
                    #expect(took >= 1.4, "\(words) took \(took) s")
                    let request = try #require(try await peer.requests().first)
                    #expect(request.contains("Content-Length: 200000"))
                    #expect(request.hasSuffix(String(repeating: "c", count: 200_000)))
                }
            }
        }
    }
}
