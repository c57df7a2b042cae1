import Glibc
import CWireLinux

/// The machine's network interfaces, as `getifaddrs(3)` lists them.
package enum NetworkInterfaces {
    /// The IPv4 and IPv6 addresses of the interface `name` (`lo`, `eth0`), in the kernel's order; nil when no
    /// interface has that name, empty when it has no IP address.
    package static func addresses(ofInterface name: String) -> [SocketAddress]? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(first) }
        var found = false
        var addresses: [SocketAddress] = []
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let entryName = current.pointee.ifa_name, String(cString: entryName) == name else { continue }
            found = true
            guard let raw = current.pointee.ifa_addr else { continue }
            let length: Int
            switch CInt(raw.pointee.sa_family) {
            case AF_INET: length = MemoryLayout<sockaddr_in>.size
            case AF_INET6: length = MemoryLayout<sockaddr_in6>.size
            default: continue
            }
            if let address = try? SocketAddress.from(sockaddr: raw, length: length) { addresses.append(address) }
        }
        return found ? addresses : nil
    }
}
