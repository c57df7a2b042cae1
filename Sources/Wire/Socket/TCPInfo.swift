/// A sample of the kernel's view of a TCP connection (Linux `TCP_INFO`), taken at the end of an exchange when
/// `HTTPClientConfiguration.samplesTCPInfo` asks for it.
public struct TCPInfo: Hashable, Sendable {
    /// The smoothed round-trip time (`tcpi_rtt`).
    public var smoothedRTT: Duration
    /// The round-trip time's mean deviation (`tcpi_rttvar`).
    public var rttVariance: Duration
    /// Retransmissions of the segment now unacknowledged (`tcpi_retransmits`): nonzero while the connection is
    /// retrying.
    public var retransmits: Int
    /// Segments retransmitted over the connection's life (`tcpi_total_retrans`).
    public var totalRetransmits: Int
    /// The congestion window, in segments (`tcpi_snd_cwnd`).
    public var congestionWindow: Int
    /// The sender's maximum segment size, in bytes (`tcpi_snd_mss`): `congestionWindow` times it is the window in
    /// bytes.
    public var sendMSS: Int
    /// The rate the kernel last measured data being delivered, in bytes per second (`tcpi_delivery_rate`); nil
    /// on a kernel too old to report it.
    public var deliveryRate: UInt64?
    /// Bytes the peer acknowledged over the connection's life (`tcpi_bytes_acked`); nil on a kernel too old to
    /// report it.
    public var bytesAcked: UInt64?

    /// A sample with these values.
    public init(
        smoothedRTT: Duration, rttVariance: Duration, retransmits: Int, totalRetransmits: Int, congestionWindow: Int,
        sendMSS: Int, deliveryRate: UInt64?, bytesAcked: UInt64?
    ) {
        self.smoothedRTT = smoothedRTT
        self.rttVariance = rttVariance
        self.retransmits = retransmits
        self.totalRetransmits = totalRetransmits
        self.congestionWindow = congestionWindow
        self.sendMSS = sendMSS
        self.deliveryRate = deliveryRate
        self.bytesAcked = bytesAcked
    }

    init(_ fields: TCPInfoFields) {
        self.init(
            smoothedRTT: .microseconds(fields.smoothedRTTMicroseconds),
            rttVariance: .microseconds(fields.rttVarianceMicroseconds),
            retransmits: Int(fields.retransmits), totalRetransmits: Int(fields.totalRetransmits),
            congestionWindow: Int(fields.congestionWindow), sendMSS: Int(fields.sendMSS), deliveryRate: fields.deliveryRate,
            bytesAcked: fields.bytesAcked)
    }
}

extension Socket {
    /// The kernel's `TCP_INFO` for this socket; nil for a socket that is not TCP (a Unix socket) or is closed.
    func tcpInfo() -> TCPInfo? {
        guard isOpen, let fields = try? Posix.tcpInfo(rawDescriptor) else { return nil }
        return TCPInfo(fields)
    }
}
