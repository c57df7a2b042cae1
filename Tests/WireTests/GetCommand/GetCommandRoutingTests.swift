import Foundation
import Testing

extension IOSuite {
    /// curl's routing switches in `wire get`, each beside curl 7.88 at the same recording peer: `--resolve`,
    /// `--connect-to`, `-4`/`-6`, `--interface`, `--abstract-unix-socket`, `--http1.0`/`--http1.1`.
    @Suite struct GetCommandRoutingTests {
        /// Runs `words` with `wire get` and with curl, both with `-sS`: the two runs.
        static func both(_ peer: CurlPeer, _ words: [String]) async throws -> (wire: WireToolRunner.Run, curl: WireToolRunner.Run)
        {
            (try await peer.wire(["-sS"] + words), try await peer.curl(["-sS"] + words))
        }

        /// The peer's port, from its base URL.
        static func port(_ peer: CurlPeer) -> String { String(peer.base.split(separator: ":").last!) }

        @Test func resolveSendsTheNameToTheGivenAddresses() async throws {
            try await CurlPeer.with { peer, _ in
                let port = Self.port(peer)
                for entry in [
                    "foo.test:\(port):127.0.0.1", "*:\(port):127.0.0.1", "FOO.test:\(port):[::1],127.0.0.1",
                    "+foo.test:\(port):127.0.0.1",
                ] {
                    let (wire, curl) = try await peer.compareHeads(
                        ["--resolve", entry, "http://foo.test:\(port)/x?body=ok"])
                    // The URL's name stays in the request: only the address changed.
                    #expect(wire.first?.contains("Host: foo.test:\(port)") == true, "\(entry): \(wire)")
                    #expect(wire == curl, "\(entry)")
                }
                // A later `-` entry takes an earlier one back: the name no longer resolves.
                let removed = try await Self.both(
                    peer,
                    ["--resolve", "foo.test:\(port):127.0.0.1", "--resolve", "-foo.test:\(port)", "http://foo.test:\(port)/x"])
                #expect(removed.wire.status == 6 && removed.curl.status == 6, "\(removed.wire.errors)")
            }
        }

        @Test(arguments: [
            "foo.test:{port}", "foo.test:{port}:", "foo.test:{port}:127.0.0.1,bad", "foo.test:99999:127.0.0.1",
            "foo.test:x:127.0.0.1", "foo.test:{port}:[127.0.0.1",
        ])
        func aResolveEntryCurlCannotReadExits49(_ entry: String) async throws {
            try await CurlPeer.with { peer, _ in
                let port = Self.port(peer)
                let text = entry.replacingOccurrences(of: "{port}", with: port)
                let (wire, curl) = try await Self.both(peer, ["--resolve", text, "http://foo.test:\(port)/x?body=ok"])
                #expect(curl.status == 49)
                #expect(wire.status == 49 && wire.output.isEmpty, "\(wire.errors)")
                #expect(wire.errors == "wire: (49) Couldn't parse --resolve entry '\(text)'\n")
                #expect(try await peer.requests().isEmpty)
            }
        }

        @Test func connectToSendsTheConnectionElsewhereAndKeepsTheURLsHost() async throws {
            try await CurlPeer.with { peer, _ in
                let port = Self.port(peer)
                for entry in [
                    "foo.test:80:127.0.0.1:\(port)", "::127.0.0.1:\(port)", ":80:127.0.0.1:\(port)",
                    "FOO.TEST::127.0.0.1:\(port)",
                ] {
                    let (wire, curl) = try await peer.compareHeads(["--connect-to", entry, "http://foo.test/x?body=ok"])
                    #expect(wire.first?.contains("Host: foo.test") == true, "\(entry): \(wire)")
                    #expect(wire == curl, "\(entry)")
                }
                // The first entry that matches wins; one that matches neither host nor port is passed over.
                let (wire, curl) = try await peer.compareHeads(
                    [
                        "--connect-to", "other:80:127.0.0.1:1", "--connect-to", "foo.test:81:127.0.0.1:1",
                        "--connect-to", "foo.test:80:127.0.0.1:\(port)", "--connect-to", "foo.test:80:127.0.0.1:1",
                        "http://foo.test/x?body=ok",
                    ])
                #expect(wire == curl && wire.count == 1)
                // An empty port keeps the URL's: port 1 refuses.
                let samePort = try await Self.both(peer, ["--connect-to", "foo.test:1:127.0.0.1", "http://foo.test:1/x"])
                #expect(samePort.wire.status == 7 && samePort.curl.status == 7, "\(samePort.wire.errors)")
                // No entry matches: the name itself is resolved, and does not exist.
                let unmatched = try await Self.both(
                    peer, ["--connect-to", "foo.test:81:127.0.0.1:\(port)", "http://foo.test.invalid/x"])
                #expect(unmatched.wire.status == 6 && unmatched.curl.status == 6, "\(unmatched.wire.errors)")
                // A matching entry with a port that is not one: curl's 49 and its words.
                let bad = try await Self.both(peer, ["--connect-to", "foo.test:80:127.0.0.1:y", "http://foo.test/x"])
                #expect(bad.curl.status == 49)
                #expect(
                    bad.wire.status == 49 && bad.wire.errors == "wire: (49) No valid port number in connect to host string (y)\n")
            }
        }

        @Test func ipv4AndIPv6KeepOneFamily() async throws {
            try await CurlPeer.with { peer, _ in
                let port = Self.port(peer)
                // -4: localhost resolves to 127.0.0.1 only, where the peer listens.
                let v4 = try await Self.both(peer, ["-4", "http://localhost:\(port)/x?body=ok"])
                #expect(v4.wire.status == 0 && v4.wire.text == "ok" && v4.curl.text == "ok", "\(v4.wire.errors)")
                // -6 and an IPv4 address: nothing to connect to (7); -6 and a --resolve of IPv4 only: no address (6).
                for (words, status) in [
                    (["-6", "http://127.0.0.1:\(port)/x"], Int32(7)),
                    (["-6", "--resolve", "foo.test:\(port):127.0.0.1", "http://foo.test:\(port)/x"], 6),
                    (["-6", "--connect-to", "::127.0.0.1:\(port)", "http://foo.test/x"], 7),
                    (["-4", "http://[::1]:\(port)/x"], 7),
                ] {
                    let run = try await Self.both(peer, words)
                    #expect(run.curl.status == status, "\(words)")
                    #expect(
                        run.wire.status == status && run.wire.errors.hasPrefix("wire: (\(status)) "),
                        "\(words): \(run.wire.errors)")
                }
                // Only the two -4 requests (wire's and curl's) arrived.
                #expect(try await peer.requests().count == 2)
            }
        }

        @Test func interfaceBindsTheLocalEndAsCurlDoes() async throws {
            try await CurlPeer.with { peer, _ in
                // An address: the peer sees the connection come from it.
                for words in [["--interface", "127.0.0.2"], ["--interface", "host!127.0.0.3"]] {
                    let run = try await Self.both(peer, words + [peer.url("/x?peer=1")])
                    #expect(run.wire.status == 0, "\(run.wire.errors)")
                    let expected = words[1].replacingOccurrences(of: "host!", with: "") + " "
                    #expect(run.wire.text.hasPrefix(expected) && run.curl.text.hasPrefix(expected), "\(run.wire.text)")
                }
                // An interface name: tied to the device (SO_BINDTODEVICE) where the system allows it, as curl is, or
                // else bound to its address; ss writes a tied socket's address as ADDRESS%DEVICE.
                for name in ["lo", "if!lo"] {
                    let run = try await Self.both(peer, ["--interface", name, peer.url("/x?socket=1")])
                    #expect(run.wire.status == 0 && run.wire.text.hasPrefix("ESTAB"), "\(run.wire.errors) \(run.wire.text)")
                    #expect(
                        run.wire.text.contains("127.0.0.1%lo:") == run.curl.text.contains("127.0.0.1%lo:"), "\(run.wire.text)")
                }
            }
        }

        @Test(arguments: [
            (["--interface", "if!wirenosuch0"], Int32(45), "wire: (45) Couldn't bind to interface 'wirenosuch0'\n"),
            (["--interface", "wirenosuch0.invalid"], 45, "wire: (45) Couldn't bind to 'wirenosuch0.invalid'\n"),
            (["--interface", "203.0.113.7"], 45, "wire: (45) bind failed with errno 99"),
            (["--interface", "::1"], 7, "wire: (7) "),
        ])
        func anInterfaceThatCannotBeUsedExitsAsCurl(_ words: [String], _ status: Int32, _ message: String) async throws {
            try await CurlPeer.with { peer, _ in
                let run = try await Self.both(peer, words + [peer.url("/x?body=ok")])
                #expect(run.curl.status == status)
                #expect(run.wire.status == status && run.wire.errors.hasPrefix(message), "\(run.wire.errors)")
                #expect(run.wire.errors.split(separator: "\n").count == 1)
            }
        }

        @Test func abstractUnixSocketReachesTheNameInTheAbstractNamespace() async throws {
            let name = "wire-test-\(UUID().uuidString)"
            try await CurlPeer.with(abstractSocket: name) { peer, _ in
                let (wire, curl) = try await peer.compareHeads(["--abstract-unix-socket", name, "http://socket.test/x?body=ok"])
                #expect(wire.count == 1 && wire == curl)
                #expect(wire.first?.contains("Host: socket.test") == true)
                // The last of --unix-socket and --abstract-unix-socket wins, as in curl: here a file that is not there.
                let run = try await Self.both(
                    peer, ["--abstract-unix-socket", name, "--unix-socket", "/nonexistent/wire.sock", "http://socket.test/x"])
                #expect(run.wire.status == 7 && run.curl.status == 7, "\(run.wire.errors)")
                let missing = try await Self.both(peer, ["--abstract-unix-socket", name + "-not", "http://socket.test/x"])
                #expect(missing.wire.status == 7 && missing.curl.status == 7, "\(missing.wire.errors)")
            }
        }

        @Test func http10SaysSoOnTheRequestLineAndAsksNothingMore() async throws {
            try await CurlPeer.with { peer, folder in
                let file = folder.appendingPathComponent("up.bin")
                try Data(repeating: 7, count: 2000).write(to: file)
                for words in [
                    ["--http1.0"], ["-0"], ["--http1.0", "-T", file.path], ["--http1.0", "-d", "a=b"], ["-0", "--http1.1"],
                ] {
                    let (wire, curl) = try await peer.compareHeads(words + [peer.url("/x?body=ok")])
                    #expect(wire.count == 1 && wire == curl, "\(words): \(wire) != \(curl)")
                    #expect(
                        wire.first?.first?.hasSuffix(words.last == "--http1.1" ? " HTTP/1.1" : " HTTP/1.0") == true, "\(words)")
                }
            }
        }
    }
}
