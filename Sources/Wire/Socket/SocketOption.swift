import Glibc

/// A socket option Wire sets, in Swift words. Each maps to one `setsockopt(2)` call.
package enum SocketOption: Hashable, Sendable {
    /// `TCP_NODELAY`: send small segments at once instead of waiting (Nagle). On by default,
    /// since HTTP writes whole messages and latency matters more than segment count.
    case noDelay(Bool)
    /// `SO_REUSEADDR`: bind a listening port that still has connections in TIME_WAIT.
    case reuseAddress(Bool)
    /// `SO_REUSEPORT`: several sockets (one per loop) listen on one port; the kernel spreads
    /// new connections over them.
    case reusePort(Bool)
    /// `SO_KEEPALIVE`: the kernel probes idle connections.
    case keepAlive(Bool)
    /// `TCP_KEEPIDLE`: seconds a connection is idle before the first keep-alive probe (1...32767).
    case keepAliveIdle(Int)
    /// `TCP_KEEPINTVL`: seconds between keep-alive probes (1...32767).
    case keepAliveInterval(Int)
    /// `SO_SNDBUF`, in bytes.
    case sendBufferSize(Int)
    /// `SO_RCVBUF`, in bytes.
    case receiveBufferSize(Int)
    /// `SO_LINGER`: with 0 seconds, `close` resets the connection (RST) instead of a FIN.
    case linger(seconds: Int?)
    /// `IP_TOS` of an IPv4 socket: the traffic-class byte its packets carry (a DSCP code point in the upper six
    /// bits). Set before `connect` so that the SYN carries it too.
    case typeOfService(UInt8)
    /// `IPV6_TCLASS` of an IPv6 socket: the same byte for IPv6.
    case ipv6TrafficClass(UInt8)

    func apply(to fd: CInt) throws(IOError) {
        switch self {
        case .noDelay(let on): try Posix.setOption(fd, level: CInt(IPPROTO_TCP), name: TCP_NODELAY, value: on ? 1 : 0)
        case .reuseAddress(let on): try Posix.setOption(fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: on ? 1 : 0)
        case .reusePort(let on): try Posix.setOption(fd, level: SOL_SOCKET, name: SO_REUSEPORT, value: on ? 1 : 0)
        case .keepAlive(let on): try Posix.setOption(fd, level: SOL_SOCKET, name: SO_KEEPALIVE, value: on ? 1 : 0)
        case .keepAliveIdle(let seconds):
            try Posix.setOption(fd, level: CInt(IPPROTO_TCP), name: TCP_KEEPIDLE, value: CInt(clamping: seconds))
        case .keepAliveInterval(let seconds):
            try Posix.setOption(fd, level: CInt(IPPROTO_TCP), name: TCP_KEEPINTVL, value: CInt(clamping: seconds))
        case .sendBufferSize(let size): try Posix.setOption(fd, level: SOL_SOCKET, name: SO_SNDBUF, value: CInt(clamping: size))
        case .receiveBufferSize(let size):
            try Posix.setOption(fd, level: SOL_SOCKET, name: SO_RCVBUF, value: CInt(clamping: size))
        case .linger(let seconds): try Posix.setLinger(fd, seconds: seconds.map { CInt(clamping: $0) })
        case .typeOfService(let value): try Posix.setOption(fd, level: CInt(IPPROTO_IP), name: IP_TOS, value: CInt(value))
        case .ipv6TrafficClass(let value):
            try Posix.setOption(fd, level: CInt(IPPROTO_IPV6), name: IPV6_TCLASS, value: CInt(value))
        }
    }
}

/// Which direction `shutdown(2)` closes.
package enum ShutdownDirection: Sendable {
    /// No more reads.
    case read
    /// No more writes: the peer sees end of stream (a FIN).
    case write
    /// Both.
    case both

    var rawValue: CInt {
        switch self {
        case .read: CInt(SHUT_RD)
        case .write: CInt(SHUT_WR)
        case .both: CInt(SHUT_RDWR)
        }
    }
}
