import Glibc
import Testing
import Wire
import WireTestSupport

extension IOSuite {
    @Suite(.exclusiveIO) struct ConnectorTests {
        /// A listener whose accept queue is full, so further SYNs are dropped and a connect to it
        /// stalls, like an address that does not answer. Linux drops SYNs to a listener whose
        /// accept queue exceeds its backlog; with backlog 0 one queued connection fills it.
        final class StalledListener {
            let listener: Socket
            let filler: Socket
            let address: SocketAddress

            init(host: String) throws {
                listener = try Socket.makeStream(family: .ipv4)
                try listener.bind(to: try SocketAddress(ipAddress: host, port: 0))
                try listener.listen(backlog: 0)
                address = try listener.localAddress()
                filler = try Socket.makeStream(family: .ipv4)
                _ = try filler.connect(to: address)
            }

            func close() {
                try? filler.close()
                try? listener.close()
            }
        }

        @Test func localhostResolvesWithoutNetwork() async throws {
            let addresses = try await withTimeout { try await SystemResolver().resolve(host: "localhost", port: 80) }
            #expect(addresses.contains { $0.host == "127.0.0.1" || $0.host == "::1" })
            #expect(addresses.allSatisfy { $0.port == 80 })
        }

        @Test func numericHostsSkipTheResolver() async throws {
            #expect(try await SystemResolver().resolve(host: "[::1]", port: 8) == [try SocketAddress(ipAddress: "::1", port: 8)])
        }

        @Test func unknownHostIsItsOwnError() async throws {
            let before = openDescriptors()
            try await withLoop { loop in
                let error = await #expect(throws: ConnectError.self) {
                    try await Connector.connect(host: "no-such-host.invalid", port: 80, on: loop, resolver: StaticResolver([:]))
                }
                #expect(error?.reason == .unknownHost)
                #expect(error?.description.contains("no-such-host.invalid") == true)
            }
            #expect(before.newlyOpened() == [])
        }

        @Test func refusedIsItsOwnError() async throws {
            let before = openDescriptors()
            // Bind a port, then close it: nothing listens there.
            let probe = try Socket.makeStream(family: .ipv4)
            try probe.bind(to: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
            let port = try probe.localAddress().port!
            try probe.close()
            try await withLoop { loop in
                let error = await #expect(throws: ConnectError.self) {
                    try await withTimeout { try await Connector.connect(host: "127.0.0.1", port: port, on: loop) }
                }
                #expect(error?.reason == .refused)
                #expect(error?.attempts.first?.error.errno == .connectionRefused)
                #expect(error?.attempts.first?.error.syscall == "connect")
            }
            #expect(before.newlyOpened() == [])
        }

        @Test func stalledAddressTimesOut() async throws {
            let stalled = try StalledListener(host: "127.0.0.1")
            defer { stalled.close() }
            let stalledPort = stalled.address.port!
            let before = openDescriptors()
            try await withLoop { loop in
                let started = Deadline.now()
                let error = await #expect(throws: ConnectError.self) {
                    try await withTimeout {
                        try await Connector.connect(host: "127.0.0.1", port: stalledPort, on: loop, timeout: .milliseconds(300))
                    }
                }
                #expect(error?.reason == .timedOut)
                let elapsed = Deadline.now() - started
                // The upper bound grows with a sanitizer's slowdown.
                #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(3) * Sanitizer.timeScale)
            }
            #expect(before.newlyOpened() == [])
        }

        @Test func happyEyeballsConnectsThroughSecondAddressWhenFirstStalls() async throws {
            let stalled = try StalledListener(host: "127.0.0.2")
            defer { stalled.close() }
            let port = stalled.address.port!
            let before = openDescriptors()
            try await withLoop { loop in
                try await withTimeout {
                    // The same port on two loopback addresses: 127.0.0.2 stalls, 127.0.0.1 answers.
                    let good = try await loop.submit { () throws -> LoopBound<SocketListener> in
                        LoopBound(
                            try SocketListener(
                                bindingTo: try SocketAddress(ipAddress: "127.0.0.1", port: port), on: loop, onAccept: { _ in }),
                            loop: loop)
                    }
                    let goodAddress = try await loop.submit { good.value.localAddress }
                    let resolver = StaticResolver([
                        "dual.test": [
                            try SocketAddress(ipAddress: "127.0.0.2", port: 0),
                            try SocketAddress(ipAddress: "127.0.0.1", port: 0),
                        ]
                    ])
                    let started = Deadline.now()
                    // A long attempt delay, so that "after the delay, and promptly" holds on a busy machine too.
                    let socket = try await Connector.connect(
                        host: "dual.test", port: port, on: loop, resolver: resolver, timeout: .seconds(8),
                        attemptDelay: .seconds(1)
                    )
                    let elapsed = Deadline.now() - started
                    let peer = try await loop.submit { try socket.value.remoteAddress() }
                    #expect(peer == goodAddress)
                    // The second attempt starts after the attempt delay, and wins long before the first times out.
                    #expect(elapsed >= .seconds(1), "started the second attempt early: \(elapsed)")
                    // Grows with a sanitizer's slowdown, but stays below the 8 s connect timeout.
                    #expect(elapsed < min(Duration.seconds(4) * Sanitizer.timeScale, .seconds(7)), "took \(elapsed)")
                    try await loop.submit {
                        try socket.value.close()
                        good.value.close()
                    }
                }
            }
            #expect(before.newlyOpened() == [])
        }

        @Test func refusedFirstAddressFallsBackAtOnce() async throws {
            let before = openDescriptors()
            try await withLoop { loop in
                try await withTimeout {
                    let good = try await loop.submit { () throws -> LoopBound<SocketListener> in
                        LoopBound(
                            try SocketListener(
                                bindingTo: try SocketAddress(ipAddress: "127.0.0.1", port: 0), on: loop, onAccept: { _ in }),
                            loop: loop)
                    }
                    let goodAddress = try await loop.submit { good.value.localAddress }
                    let probe = try Socket.makeStream(family: .ipv4)
                    try probe.bind(to: try SocketAddress(ipAddress: "127.0.0.3", port: 0))
                    let closedAddress = try probe.localAddress()
                    try probe.close()
                    // The delay, the timeouts and the bound grow together with a sanitizer's slowdown: the bound stays
                    // half the attempt delay.
                    let scale = Sanitizer.timeScale
                    let started = Deadline.now()
                    let socket = try await Connector.connect(
                        to: [closedAddress, goodAddress], host: "test", port: nil, on: loop,
                        deadline: .after(.seconds(8) * scale), timeout: .seconds(8) * scale, attemptDelay: .seconds(4) * scale
                    )
                    #expect(
                        Deadline.now() - started < .seconds(2) * scale, "a refusal should not wait for the attempt delay")
                    try await loop.submit {
                        try socket.value.close()
                        good.value.close()
                    }
                }
            }
            #expect(before.newlyOpened() == [])
        }
    }
}
