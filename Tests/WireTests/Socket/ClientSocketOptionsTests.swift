import Glibc
import Testing
import Wire

/// The socket options `ClientSocketOptions` sets before a client socket connects (curl's `--tcp-nodelay`,
/// `--keepalive-time`, `--interface`), read back from the kernel.
@Suite struct ClientSocketOptionsTests {
    /// A fresh TCP socket with `options` applied.
    static func socket(_ options: ClientSocketOptions, family: SocketAddress.Family = .ipv4) throws -> Socket {
        let socket = try Socket.makeStream(family: family)
        try options.apply(to: socket, family: family)
        return socket
    }

    @Test func noDelayIsOnUnlessTurnedOff() throws {
        let defaults = try Self.socket(ClientSocketOptions())
        defer { try? defaults.close() }
        #expect(try defaults.integerOption(level: CInt(IPPROTO_TCP), name: TCP_NODELAY) != 0)
        #expect(try defaults.integerOption(level: SOL_SOCKET, name: SO_KEEPALIVE) == 0)
        var options = ClientSocketOptions()
        options.noDelay = false
        let nagle = try Self.socket(options)
        defer { try? nagle.close() }
        #expect(try nagle.integerOption(level: CInt(IPPROTO_TCP), name: TCP_NODELAY) == 0)
    }

    @Test func keepAliveSetsItsTimings() throws {
        var options = ClientSocketOptions()
        options.keepAlive = .init(idle: 17, interval: 5)
        let socket = try Self.socket(options)
        defer { try? socket.close() }
        #expect(try socket.integerOption(level: SOL_SOCKET, name: SO_KEEPALIVE) != 0)
        #expect(try socket.integerOption(level: CInt(IPPROTO_TCP), name: TCP_KEEPIDLE) == 17)
        #expect(try socket.integerOption(level: CInt(IPPROTO_TCP), name: TCP_KEEPINTVL) == 5)
        // Timings the kernel refuses leave its own, as curl's failed setsockopt does.
        options.keepAlive = .init(idle: 0, interval: 1_000_000)
        let refused = try Self.socket(options)
        defer { try? refused.close() }
        #expect(try refused.integerOption(level: SOL_SOCKET, name: SO_KEEPALIVE) != 0)
    }

    @Test func anAddressBindingTakesTheAddressOfTheSocketsFamily() throws {
        var options = ClientSocketOptions()
        options.localBinding = .addresses([
            try SocketAddress(ipAddress: "::1", port: 0), try SocketAddress(ipAddress: "127.0.0.2", port: 9),
        ])
        let socket = try Self.socket(options)
        defer { try? socket.close() }
        #expect(try socket.localAddress().host == "127.0.0.2")
        // None of the socket's family: bind's EAFNOSUPPORT, which the tool reports as curl's "could not connect".
        options.localBinding = .addresses([try SocketAddress(ipAddress: "::1", port: 0)])
        #expect(throws: IOError(syscall: "bind", errno: .addressFamilyNotSupported)) { try Self.socket(options) }
    }

    @Test func abstractUnixAddressesHaveNoFile() throws {
        let name = "\u{0}wire-options-test-\(getpid())"
        let address = try SocketAddress(unixPath: name)
        #expect(address.description == "unix:@wire-options-test-\(getpid())")
        let listener = try Socket.makeStream(family: .unix)
        defer { try? listener.close() }
        try listener.bind(to: address)
        // Read back from the kernel: the same name, its NUL first.
        #expect(try listener.localAddress() == address)
        #expect(throws: SocketAddressError.self) { try SocketAddress(unixPath: "\u{0}") }
    }
}
