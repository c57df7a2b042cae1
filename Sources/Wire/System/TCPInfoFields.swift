import Glibc

/// The fields of Linux's `struct tcp_info` (linux/tcp.h) that Wire reports, as the kernel gave them: times in
/// microseconds, counts in segments or bytes. A field the running kernel's structure does not reach (it only grows,
/// at its end) is nil.
package struct TCPInfoFields: Hashable, Sendable {
    package var smoothedRTTMicroseconds: UInt32
    package var rttVarianceMicroseconds: UInt32
    package var retransmits: UInt8
    package var totalRetransmits: UInt32
    package var congestionWindow: UInt32
    package var sendMSS: UInt32
    package var bytesAcked: UInt64?
    package var deliveryRate: UInt64?
}

extension Posix {
    /// `getsockopt(fd, IPPROTO_TCP, TCP_INFO)`, decoded at the offsets of linux/tcp.h (an append-only kernel ABI).
    /// Glibc's `netinet/tcp.h` stops short of `tcpi_bytes_acked` and `tcpi_delivery_rate`, hence the bytes.
    static func tcpInfo(_ fd: CInt) throws(IOError) -> TCPInfoFields {
        // 232 bytes reach every field of a 6.x kernel's structure; a longer one is truncated, a shorter one says so.
        var bytes = [UInt8](repeating: 0, count: 232)
        var length = socklen_t(bytes.count)
        _ = try systemCall("getsockopt") {
            bytes.withUnsafeMutableBytes { Glibc.getsockopt(fd, CInt(IPPROTO_TCP), TCP_INFO, $0.baseAddress, &length) }
        }
        let filled = Int(length)
        func u32(_ offset: Int) -> UInt32 {
            guard offset + 4 <= filled else { return 0 }
            return bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
        }
        func u64(_ offset: Int) -> UInt64? {
            guard offset + 8 <= filled else { return nil }
            return bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
        }
        return TCPInfoFields(
            smoothedRTTMicroseconds: u32(68), rttVarianceMicroseconds: u32(72), retransmits: filled > 2 ? bytes[2] : 0,
            totalRetransmits: u32(100), congestionWindow: u32(80), sendMSS: u32(16), bytesAcked: u64(120),
            deliveryRate: u64(160))
    }
}
