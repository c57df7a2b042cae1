import Foundation
import Glibc
import Testing
import WireTestSupport

extension IOSuite {
    /// The files of `wire get` that hold secrets: the `-c` cookie jar and the `--cache-dir` cache. The tool runs under
    /// a umask set for it alone (`sh -c 'umask …; exec wire …'`), so a file made with the default mode shows it.
    @Suite struct GetCommandPrivateFilesTests {
        /// Runs the real `wire` with `arguments` under `umask`.
        static func wire(umask: String, _ arguments: [String]) async throws -> WireToolRunner.Run {
            try await WireToolRunner.run(
                program: URL(fileURLWithPath: "/bin/sh"),
                ["-c", "umask \(umask); exec \"$0\" \"$@\"", WireToolRunner.executable.path] + arguments)
        }

        static func mode(_ path: String) -> mode_t? {
            var info = stat()
            return stat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
        }

        static func octal(_ mode: mode_t?) -> String { mode.map { String($0, radix: 8) } ?? "absent" }

        @Test func aNewCookieJarIs0600AndARewrittenOneKeepsItsMode() async throws {
            try await GetCommandCookieTests.withPeer { base, folder in
                let jar = folder.appendingPathComponent("jar").path
                // Under a umask that takes nothing away, a jar made with the default mode would be 0644 or 0666.
                var run = try await Self.wire(umask: "000", ["get", "-s", "-c", jar, "\(base)/redirect"])
                #expect(run.status == 0, "\(run.errors)")
                #expect(Self.mode(jar) == 0o600, "new jar \(Self.octal(Self.mode(jar)))")
                for kept: mode_t in [0o600, 0o640] {
                    #expect(chmod(jar, kept) == 0)
                    run = try await Self.wire(umask: "022", ["get", "-s", "-b", jar, "-c", jar, "\(base)/redirect"])
                    #expect(run.status == 0, "\(run.errors)")
                    #expect(Self.mode(jar) == kept, "kept \(Self.octal(kept)): \(Self.octal(Self.mode(jar)))")
                }
                let text = try String(contentsOfFile: jar, encoding: .utf8)
                #expect(text.contains("\thop\t1\n"), "\(text)")
            }
        }

        @Test func theCacheDirectoryIs0700AndItsEntries0600() async throws {
            try await GetCommandCacheTests.withPeer { base in
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let cache = folder.appendingPathComponent("cache/http").path
                let run = try await Self.wire(umask: "000", ["get", "-s", "--cache-dir", cache, base + "/fresh"])
                #expect(run.status == 0 && run.text == "fresh body", "\(run.errors)")
                #expect(Self.mode(folder.appendingPathComponent("cache").path) == 0o700)
                #expect(Self.mode(cache) == 0o700, "\(Self.octal(Self.mode(cache)))")
                let entries = try FileManager.default.contentsOfDirectory(atPath: cache)
                #expect(entries.count == 1)
                for name in entries { #expect(Self.mode(cache + "/" + name) == 0o600) }
            }
        }
    }
}
