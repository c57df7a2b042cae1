import Glibc
import Wire

/// Ports on 127.0.0.1 for peers the tests start as processes (nginx), which cannot report the port they bound.
enum LoopbackPort {
    /// A port nothing listens on now: bound, read, and released.
    static func free() throws -> Int {
        let socket = try Socket.makeStream(family: .ipv4)
        try socket.bind(to: SocketAddress(ipAddress: "127.0.0.1", port: 0))
        let port = try socket.localAddress().port ?? 0
        try socket.close()
        return port
    }

    /// `count` ports nothing listens on now, all different: each reservation stays bound until the last is read, since
    /// a port released and asked for again can come back (one nginx test once got the same port for two sites, and
    /// the second site's URL reached the first site's certificate).
    static func free(count: Int) throws -> [Int] {
        var sockets: [Socket] = []
        defer { for socket in sockets { try? socket.close() } }
        var ports: [Int] = []
        for _ in 0..<count {
            let socket = try Socket.makeStream(family: .ipv4)
            sockets.append(socket)
            try socket.bind(to: SocketAddress(ipAddress: "127.0.0.1", port: 0))
            ports.append(try socket.localAddress().port ?? 0)
        }
        return ports
    }

    /// Whether a blocking connect to the port succeeds at once (refused while a peer starts).
    static func accepts(_ port: Int) -> Bool {
        let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { Glibc.close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
