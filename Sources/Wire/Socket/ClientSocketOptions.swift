import Glibc

/// How a client's TCP sockets are set up before they connect: curl's `--tcp-nodelay`, `--keepalive-time` and
/// `--interface`. Unix-domain sockets take none of them.
package struct ClientSocketOptions: Hashable, Sendable {
    /// TCP keep-alive probes on idle connections.
    package struct KeepAlive: Hashable, Sendable {
        /// Seconds of idleness before the first probe (`TCP_KEEPIDLE`); nil keeps the system's.
        package var idle: Int?
        /// Seconds between probes (`TCP_KEEPINTVL`); nil keeps the system's.
        package var interval: Int?

        /// Probes after `idle` seconds, then every `interval` seconds.
        package init(idle: Int?, interval: Int?) {
            self.idle = idle
            self.interval = interval
        }
    }

    /// Where a socket's local end is tied before it connects.
    package enum LocalBinding: Hashable, Sendable {
        /// The interface `name` (`SO_BINDTODEVICE`); where the system refuses that (it may need privileges), the
        /// socket is bound to the interface's first address of its family, one of `addresses`.
        case interface(String, addresses: [SocketAddress])
        /// The first of these addresses of the socket's family, with a port the system picks.
        case addresses([SocketAddress])
    }

    /// `TCP_NODELAY`. Default on, as in curl.
    package var noDelay = true
    /// `SO_KEEPALIVE` with its timings; nil (the default) leaves keep-alive off.
    package var keepAlive: KeepAlive?
    /// The local binding; nil (the default) lets the system choose.
    package var localBinding: LocalBinding?

    /// The defaults: `TCP_NODELAY`, no keep-alive, no binding.
    package init() {}

    /// Sets the options on a fresh socket of `family`.
    ///
    /// - Throws: `IOError` when the binding cannot be made: `bind` with `EAFNOSUPPORT` when no address of the
    ///   socket's family is given, or the error of `bind(2)`. Keep-alive timings the system refuses are left at the
    ///   system's values, as curl leaves them.
    package func apply(to socket: Socket, family: SocketAddress.Family) throws(IOError) {
        guard family != .unix else { return }
        if !noDelay { try socket.setOption(.noDelay(false)) }
        if let keepAlive {
            try socket.setOption(.keepAlive(true))
            if let idle = keepAlive.idle { try? socket.setOption(.keepAliveIdle(idle)) }
            if let interval = keepAlive.interval { try? socket.setOption(.keepAliveInterval(interval)) }
        }
        switch localBinding {
        case nil:
            break
        case .interface(let name, let addresses):
            do { try socket.bind(toDevice: name) } catch {
                try Self.bind(socket, toOneOf: addresses, family: family)
            }
        case .addresses(let addresses):
            try Self.bind(socket, toOneOf: addresses, family: family)
        }
    }

    private static func bind(_ socket: Socket, toOneOf addresses: [SocketAddress], family: SocketAddress.Family)
        throws(IOError)
    {
        guard let address = addresses.first(where: { $0.family == family }) else {
            throw IOError(syscall: "bind", errno: .addressFamilyNotSupported)
        }
        try socket.bind(to: address.withPort(0))
    }
}
