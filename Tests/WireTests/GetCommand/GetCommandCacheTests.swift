import Foundation
import Glibc
import Testing
import Wire
import WireClient
import WireTestSupport

extension IOSuite {
    /// `wire get --cache-dir DIR` (a Wire extension) against a Python peer whose answers carry caching headers.
    @Suite struct GetCommandCacheTests {
        /// The peer's 4 MiB body for `/big/N`.
        static let big = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }

        static func withPeer(_ body: (String) async throws -> Void) async throws {
            let peer = try TestProcess("/usr/bin/env", ["python3", "\(testResources)/cache_peer.py"])
            defer { peer.stop() }
            guard let port = Int(try await peer.firstLine()) else { throw TestTimeout(seconds: 0) }
            try await body("http://127.0.0.1:\(port)")
        }

        @Test func verboseSaysWhetherTheAnswerCameFromTheCacheWasRevalidatedOrWentToTheNetwork() async throws {
            try await Self.withPeer { base in
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let cache = folder.appendingPathComponent("cache").path
                func get(_ path: String) async throws -> WireToolRunner.Run {
                    let run = try await WireToolRunner.run(["get", "-v", "--cache-dir", cache, base + path])
                    #expect(run.status == 0, "\(run.errors)")
                    return run
                }
                var run = try await get("/fresh")
                #expect(run.text == "fresh body")
                #expect(run.errors.contains("* cache: miss\n") && run.errors.contains("* cache: stored\n"), "\(run.errors)")
                // Another process: the answer comes from DIR, and nothing is sent.
                run = try await get("/fresh")
                #expect(run.text == "fresh body")
                #expect(run.errors == "* cache: hit (fresh)\n")
                _ = try await get("/etag")
                run = try await get("/etag")
                #expect(run.text == "etag body")
                #expect(run.errors.contains("> If-None-Match: \"v1\""), "\(run.errors)")
                #expect(run.errors.contains("< HTTP/1.1 304"), "\(run.errors)")
                #expect(run.errors.contains("* cache: revalidated (304)\n"), "\(run.errors)")
                // With -i the merged head goes out as the stored 200.
                let headed = try await WireToolRunner.run(["get", "-i", "--cache-dir", cache, base + "/etag"])
                #expect(headed.text.hasPrefix("HTTP/1.1 200 OK\r\n") && headed.text.contains("X-Revalidated: yes"))
                #expect(headed.text.hasSuffix("\r\n\r\netag body"))
                run = try await get("/no-store")
                #expect(run.errors.contains("* cache: not stored: no-store in the response\n"), "\(run.errors)")
                run = try await get("/no-store")
                #expect(run.errors.contains("* cache: miss\n"), "\(run.errors)")
                #expect(run.text == "secret")
            }
        }

        /// Runs `wire get` for a 4 MiB cacheable body and kills it with SIGKILL after `delay`; true when it was killed.
        static func runKilled(_ arguments: [String], after delay: Duration) async throws -> Bool {
            let process = Process()
            process.executableURL = WireToolRunner.executable
            process.arguments = arguments
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // The delay picks the moment of the kill (the test's subject), it does not wait for anything.
            try await Task.sleep(for: delay)
            let killed = process.isRunning
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return killed && process.terminationReason == .uncaughtSignal
        }

        @Test func aWriterKilledAtRandomMomentsLeavesEntriesWholeOrAbsent() async throws {
            try await Self.withPeer { base in
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let cache = folder.appendingPathComponent("cache").path
                var random = SplitMix64(seed: UInt64(Date().timeIntervalSince1970))
                var kills = 0
                let rounds = 16
                for round in 0..<rounds {
                    let delay = Duration.milliseconds(Int(random.next() % 700))
                    if try await Self.runKilled(
                        ["get", "-s", "-o", "/dev/null", "--cache-dir", cache, "\(base)/big/\(round)"],
                        after: delay)
                    {
                        kills += 1
                    }
                }
                // One writer that is not killed: the directory still takes entries after the kills.
                let last = try await WireToolRunner.run(
                    ["get", "-s", "-o", "/dev/null", "--cache-dir", cache, "\(base)/big/last"],
                    seconds: 60)
                #expect(last.status == 0)
                #expect(kills > 0, "no run was killed")
                let opened = URLCache(memoryCapacity: 0, diskCapacity: 1 << 30, directory: cache)
                var hits = 0
                for name in (0..<rounds).map(String.init) + ["last"] {
                    guard let entry = await opened.cachedResponse(for: ClientRequest(url: URL(string: "\(base)/big/\(name)")!))
                    else {
                        continue
                    }
                    hits += 1
                    #expect(entry.data.count == Self.big.count && entry.data.elementsEqual(Self.big), "torn body for \(name)")
                }
                #expect(hits >= 1)
                let leftovers = try FileManager.default.contentsOfDirectory(atPath: cache).filter { $0.hasPrefix(".") }
                #expect(leftovers.isEmpty, "temporary files left after opening: \(leftovers)")
            }
        }
    }
}
