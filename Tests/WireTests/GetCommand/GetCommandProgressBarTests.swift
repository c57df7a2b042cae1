import Foundation
import Testing
import WireTool

extension IOSuite {
    /// `-#`/`--progress-bar` draws curl 7.88's bar: both tools run under `script` (a terminal) with a fixed `COLUMNS`.
    @Suite struct GetCommandProgressBarTests {
        /// Runs `tool -# -o /dev/null URL` under `script` and returns what the terminal got, with the pty's `\r\n`
        /// turned back into `\n`.
        static func drawn(_ tool: String, _ url: String, columns: Int) async throws -> String {
            let script = URL(fileURLWithPath: "/usr/bin/script")
            let command = "\(tool) -# -o /dev/null '\(url)'"
            let run = try await WireToolRunner.run(
                program: script, ["-qec", command, "/dev/null"], environment: ["COLUMNS": String(columns)])
            #expect(run.status == 0, "\(run.text)")
            return run.text.replacingOccurrences(of: "\r\n", with: "\n")
        }

        static let wire = "'\(WireToolRunner.executable.path)' get"

        /// A known length: `#` over the width less 7 columns, then `%5.1f%%`; the last drawing is 100 %, then a line end.
        @Test func aKnownLengthEndsWithCurlsFullBar() async throws {
            try await CurlPeer.with { peer, _ in
                let url = peer.url("/x?size=300000")
                let wire = try await Self.drawn(Self.wire, url, columns: 60)
                let curl = try await Self.drawn("/usr/bin/curl", url, columns: 60)
                let full = "\r" + String(repeating: "#", count: 53) + " 100.0%\n"
                #expect(wire.hasSuffix(full), "\(wire)")
                #expect(curl.hasSuffix(full), "\(curl)")
                // Every drawing has curl's shape: 53 columns of bar, a blank, the percentage.
                for frame in wire.split(separator: "\r") where !frame.isEmpty {
                    #expect(frame.trimmingCharacters(in: .newlines).count == 60, "\(frame)")
                }
            }
        }

        /// An unknown length (a chunked body in four pieces 150 ms apart): curl's moving `-=O=-` with four `#` on a
        /// sine, each frame of width − 1 columns ended by `\r`; the first frame is the same in both, and each ends with
        /// a line end.
        @Test func anUnknownLengthFliesCurlsPattern() async throws {
            try await CurlPeer.with { peer, _ in
                let url = peer.url("/x?size=1000&chunked=1&drip=4&every=150")
                let wire = try await Self.drawn(Self.wire, url, columns: 40)
                let curl = try await Self.drawn("/usr/bin/curl", url, columns: 40)
                let first = "###=-" + String(repeating: " ", count: 34)
                #expect(wire.hasPrefix(first + "\r"), "\(wire)")
                #expect(curl.hasPrefix(first + "\r"), "\(curl)")
                #expect(wire.hasSuffix("\r\n") && curl.hasSuffix("\r\n"))
                // Split by scalars: "\r\n" is one Character.
                let frames = wire.unicodeScalars.split(separator: "\r").map { String($0) }.filter { $0 != "\n" }
                #expect(frames.count >= 2 && frames.allSatisfy { $0.count == 39 && $0.contains("=-") }, "\(frames)")
            }
        }

        /// curl draws no bar for a body written to the terminal, and draws one for a body written elsewhere whatever
        /// standard error is.
        @Test func noBarForABodyOnTheTerminal() async throws {
            try await CurlPeer.with { peer, _ in
                let script = URL(fileURLWithPath: "/usr/bin/script")
                for tool in [Self.wire, "/usr/bin/curl"] {
                    let run = try await WireToolRunner.run(
                        program: script, ["-qec", "\(tool) -# '\(peer.url("/x?body=hi"))'", "/dev/null"])
                    #expect(run.text == "hi", "\(tool): \(run.text)")
                }
                let piped = try await WireToolRunner.run(
                    ["get", "-#", "-o", "/dev/null", peer.url("/x?size=2000")], environment: ["COLUMNS": "79"])
                #expect(piped.errors == "\r" + String(repeating: "#", count: 72) + " 100.0%\n")
            }
        }

        @Test func theWidthIsCurls() {
            #expect(CurlProgressBar.width(columns: "60", terminalColumns: 100) == 60)
            #expect(CurlProgressBar.width(columns: "20", terminalColumns: nil) == 79)
            #expect(CurlProgressBar.width(columns: "6O", terminalColumns: 100) == 100)
            #expect(CurlProgressBar.width(columns: nil, terminalColumns: 0) == 79)
            #expect(CurlProgressBar.width(columns: "5000", terminalColumns: nil) == 256)
            #expect(CurlProgressBar.percent(100) == "100.0" && CurlProgressBar.percent(2.25) == "  2.2")
        }
    }
}
