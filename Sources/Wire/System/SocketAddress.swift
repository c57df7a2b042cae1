import CWireLinux
import Glibc

/// The address of a socket: an IPv4 or IPv6 address with a port, or a Unix-domain socket path.
///
/// ```swift
/// let local = try SocketAddress(ipAddress: "127.0.0.1", port: 8080)
/// let daemon = try SocketAddress(unixPath: "/var/run/docker.sock")
/// ```
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    package enum Storage: Hashable, Sendable {
        /// The address in network byte order, as in `in_addr.s_addr`.
        case v4(address: UInt32, port: UInt16)
        /// The 16 address bytes in network order, split in two big-endian halves.
        case v6(high: UInt64, low: UInt64, port: UInt16, scopeID: UInt32)
        case unix(path: String)
    }

    /// The families a socket address can belong to.
    public enum Family: Hashable, Sendable {
        /// IPv4 (`AF_INET`).
        case ipv4
        /// IPv6 (`AF_INET6`).
        case ipv6
        /// A Unix-domain socket (`AF_UNIX`).
        case unix
    }

    package let storage: Storage

    init(storage: Storage) { self.storage = storage }

    /// Parses a numeric IPv4 or IPv6 address (no name resolution), as `inet_pton(3)` does.
    ///
    /// - Throws: `SocketAddressError.invalidIPAddress` when the text is neither.
    public init(ipAddress: String, port: Int) throws(SocketAddressError) {
        guard (0...65535).contains(port) else { throw .invalidPort(port) }
        var v4 = in_addr()
        if inet_pton(AF_INET, ipAddress, &v4) == 1 {
            storage = .v4(address: v4.s_addr, port: UInt16(port))
            return
        }
        // A zone index (`fe80::1%eth0`) is accepted for link-local addresses.
        let parts = ipAddress.split(separator: "%", maxSplits: 1)
        var v6 = in6_addr()
        if let host = parts.first, inet_pton(AF_INET6, String(host), &v6) == 1 {
            var scope: UInt32 = 0
            if parts.count == 2 { scope = if_nametoindex(String(parts[1])) }
            let (high, low) = Self.halves(of: v6)
            storage = .v6(high: high, low: low, port: UInt16(port), scopeID: scope)
            return
        }
        throw .invalidIPAddress(ipAddress)
    }

    /// The address of a Unix-domain socket at `path`. A path that starts with a NUL (`"\0name"`) is a name in
    /// Linux's abstract namespace (unix(7)): no file, and the name is exactly the bytes after the NUL.
    ///
    /// - Throws: `SocketAddressError.unixPathTooLong` when the path does not fit `sun_path`.
    public init(unixPath path: String) throws(SocketAddressError) {
        // An abstract name has no terminating NUL: it may fill `sun_path`.
        let limit = path.utf8.first == 0 ? c_wire_sun_path_capacity() : c_wire_sun_path_capacity() - 1
        guard path.utf8.count <= limit else { throw .unixPathTooLong(path, limit: limit) }
        guard !path.isEmpty, path != "\u{0}" else { throw .unixPathTooLong(path, limit: 0) }
        storage = .unix(path: path)
    }

    /// The address family.
    public var family: Family {
        switch storage {
        case .v4: .ipv4
        case .v6: .ipv6
        case .unix: .unix
        }
    }

    /// Whether this is the unspecified (wildcard) IP address, `0.0.0.0` or `::`: a socket bound to it takes each
    /// connection on whichever of the machine's addresses it came to.
    package var isUnspecified: Bool {
        switch storage {
        case .v4(let address, _): address == 0
        case .v6(let high, let low, _, _): high == 0 && low == 0
        case .unix: false
        }
    }

    /// The port, or nil for a Unix-domain socket.
    public var port: Int? {
        switch storage {
        case .v4(_, let port), .v6(_, _, let port, _): Int(port)
        case .unix: nil
        }
    }

    /// This address with another port (a Unix-domain address is returned unchanged).
    public func withPort(_ port: Int) -> SocketAddress {
        switch storage {
        case .v4(let address, _): SocketAddress(storage: .v4(address: address, port: UInt16(truncatingIfNeeded: port)))
        case .v6(let high, let low, _, let scope):
            SocketAddress(storage: .v6(high: high, low: low, port: UInt16(truncatingIfNeeded: port), scopeID: scope))
        case .unix: self
        }
    }

    /// The numeric host (`127.0.0.1`, `::1`) or the socket path (an abstract name with its leading NUL).
    public var host: String {
        switch storage {
        case .v4(let address, _):
            var value = in_addr(s_addr: address)
            return Self.presentation(family: AF_INET, &value)
        case .v6(let high, let low, _, _):
            var value = Self.in6(high: high, low: low)
            return Self.presentation(family: AF_INET6, &value)
        case .unix(let path):
            return path
        }
    }

    /// `127.0.0.1:80`, `[::1]:80` or `unix:/path`.
    public var description: String {
        switch storage {
        case .v4(_, let port): "\(host):\(port)"
        case .v6(_, _, let port, _): "[\(host)]:\(port)"
        case .unix(let path): path.utf8.first == 0 ? "unix:@" + path.dropFirst() : "unix:\(path)"
        }
    }

    /// Calls `body` with a `sockaddr` pointer and length for this address.
    func withSockAddr<R, E: Error>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(E) -> R) throws(E) -> R {
        switch storage {
        case .v4(let address, let port):
            var raw = sockaddr_in()
            raw.sin_family = sa_family_t(AF_INET)
            raw.sin_port = port.bigEndian
            raw.sin_addr = in_addr(s_addr: address)
            return try withUnsafeBytes(of: &raw) { (bytes) throws(E) -> R in
                try body(bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
            }
        case .v6(let high, let low, let port, let scope):
            var raw = sockaddr_in6()
            raw.sin6_family = sa_family_t(AF_INET6)
            raw.sin6_port = port.bigEndian
            raw.sin6_addr = Self.in6(high: high, low: low)
            raw.sin6_scope_id = scope
            return try withUnsafeBytes(of: &raw) { (bytes) throws(E) -> R in
                try body(bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
            }
        case .unix(let path):
            var raw = sockaddr_un()
            raw.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &raw.sun_path) { destination in
                let bytes = Array(path.utf8)
                destination.copyBytes(from: bytes.prefix(destination.count - 1))
            }
            // A path names a file with its terminating NUL; an abstract name is its bytes alone.
            let length = MemoryLayout<sa_family_t>.size + path.utf8.count + (path.utf8.first == 0 ? 0 : 1)
            return try withUnsafeBytes(of: &raw) { (bytes) throws(E) -> R in
                try body(bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(length))
            }
        }
    }

    /// Reads an address the kernel writes into a `sockaddr_storage` (getsockname, getpeername).
    static func fromKernel(
        _ fill: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) throws(IOError) -> Void
    ) throws(IOError) -> SocketAddress {
        var raw = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        try withUnsafeMutableBytes(of: &raw) { (bytes) throws(IOError) in
            try fill(bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        return try SocketAddress(sockaddrStorage: raw, length: Int(length))
    }

    /// Converts an address the kernel wrote into a `sockaddr_storage` (accept4) of `length` bytes.
    static func fromKernel(_ raw: sockaddr_storage, length: Int) throws(IOError) -> SocketAddress {
        try SocketAddress(sockaddrStorage: raw, length: length)
    }

    /// Converts a kernel `sockaddr` (from getaddrinfo or getsockname) into a value.
    static func from(sockaddr pointer: UnsafePointer<sockaddr>, length: Int) throws(IOError) -> SocketAddress {
        var raw = sockaddr_storage()
        withUnsafeMutableBytes(of: &raw) { destination in
            destination.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: min(length, destination.count)))
        }
        return try SocketAddress(sockaddrStorage: raw, length: length)
    }

    private init(sockaddrStorage raw: sockaddr_storage, length: Int) throws(IOError) {
        var raw = raw
        switch CInt(raw.ss_family) {
        case AF_INET:
            let value = withUnsafeBytes(of: &raw) { $0.loadUnaligned(as: sockaddr_in.self) }
            storage = .v4(address: value.sin_addr.s_addr, port: UInt16(bigEndian: value.sin_port))
        case AF_INET6:
            let value = withUnsafeBytes(of: &raw) { $0.loadUnaligned(as: sockaddr_in6.self) }
            let (high, low) = Self.halves(of: value.sin6_addr)
            storage = .v6(high: high, low: low, port: UInt16(bigEndian: value.sin6_port), scopeID: value.sin6_scope_id)
        case AF_UNIX:
            let pathOffset = MemoryLayout<sa_family_t>.size
            let path = withUnsafeBytes(of: &raw) { bytes -> String in
                let pathBytes = bytes[pathOffset..<max(pathOffset, min(length, bytes.count))]
                // An abstract name: the NUL, then every byte the length covers.
                if pathBytes.count > 1, pathBytes.first == 0 { return String(decoding: pathBytes, as: UTF8.self) }
                return String(decoding: pathBytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            storage = .unix(path: path)
        default:
            throw IOError(syscall: "sockaddr", errno: Errno(rawValue: EAFNOSUPPORT))
        }
    }

    private static func halves(of address: in6_addr) -> (UInt64, UInt64) {
        withUnsafeBytes(of: address) { bytes in
            (
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }

    private static func in6(high: UInt64, low: UInt64) -> in6_addr {
        var value = in6_addr()
        withUnsafeMutableBytes(of: &value) { bytes in
            bytes.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return value
    }

    private static func presentation<T>(family: CInt, _ value: inout T) -> String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let converted = withUnsafeBytes(of: &value) { address in
            text.withUnsafeMutableBufferPointer { buffer in
                inet_ntop(family, address.baseAddress, buffer.baseAddress, socklen_t(buffer.count))
            }
        }
        guard converted != nil else { return "?" }
        return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}

/// Why a socket address could not be formed.
public enum SocketAddressError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text is not a numeric IPv4 or IPv6 address.
    case invalidIPAddress(String)
    /// The port is outside 0...65535.
    case invalidPort(Int)
    /// The path does not fit in `sockaddr_un.sun_path`.
    case unixPathTooLong(String, limit: Int)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .invalidIPAddress(let text): "not a numeric IP address: \(text)"
        case .invalidPort(let port): "port \(port) is outside 0...65535"
        case .unixPathTooLong(let path, let limit): "Unix socket path \(path) is empty or longer than \(limit) bytes"
        }
    }
}
