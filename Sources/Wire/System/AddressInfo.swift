import CWireLinux
import Glibc

extension Posix {
    /// Resolves `host` to stream-socket addresses of both families, in the resolver's order.
    /// Blocks: call it off the event loop. The corresponding C function is `getaddrinfo(3)`.
    static func getAddressInfo(host: String, port: Int) throws(NameResolutionError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = CInt(SOCK_STREAM.rawValue)
        hints.ai_protocol = CInt(IPPROTO_TCP)
        // AI_ADDRCONFIG would hide ::1 on hosts with no global IPv6 address; keep every family.
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0 else {
            let message = String(cString: gai_strerror(status))
            let systemError = status == EAI_SYSTEM ? Errno.current : nil
            throw NameResolutionError(host: host, code: status, message: message, systemError: systemError)
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var cursor = list
        while let entry = cursor {
            if let raw = entry.pointee.ai_addr,
                let address = try? SocketAddress.from(sockaddr: raw, length: Int(entry.pointee.ai_addrlen)),
                !addresses.contains(address)
            {
                addresses.append(address)
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }
}

/// A host name that could not be resolved.
public struct NameResolutionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The name that was looked up.
    public let host: String
    /// The `EAI_*` code `getaddrinfo` returned.
    public let code: CInt
    /// The resolver's message (`gai_strerror(3)`).
    public let message: String
    /// The `errno` behind `EAI_SYSTEM`, if that was the code.
    public let systemError: Errno?

    /// Whether the name does not exist (as opposed to a resolver that could not be reached).
    public var isUnknownHost: Bool {
        code == EAI_NONAME || code == eaiNoData || code == EAI_FAIL
    }

    /// `could not resolve host example.invalid: Name or service not known`.
    public var description: String { "could not resolve host \(host): \(message)" }
}

extension NameResolutionError {
    /// The error for a name that no resolver knows (`EAI_NONAME`).
    package static func unknownHost(_ host: String) -> NameResolutionError {
        NameResolutionError(host: host, code: EAI_NONAME, message: "Name or service not known", systemError: nil)
    }
}

/// `EAI_NODATA` (the name exists but has no address), a GNU extension Glibc's Swift module hides.
private let eaiNoData: CInt = -5
