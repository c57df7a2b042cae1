/// What a request asks of the connection that carries it, beyond its origin. Requests with different requirements
/// never share a connection: each set of requirements has pools of its own.
///
/// ```swift
/// var request = HTTPClientRequest(url: "http://example.com/feed")
/// request.connectionRequirements.trafficClass = 0x20  // DSCP CS1: background traffic
/// ```
package struct ConnectionRequirements: Hashable, Sendable {
    /// The IP traffic-class byte (`IP_TOS` for IPv4, `IPV6_TCLASS` for IPv6), a DSCP code point in its upper six
    /// bits. It is set on the socket before it connects, so the SYN carries it as well as every later packet. nil
    /// (the default) leaves the system's default.
    package var trafficClass: UInt8?
    /// A check each new connection must pass once it has connected, before TLS and before its first request; a
    /// refused connection is closed and the request fails with `.connectionNotAdmitted`. nil admits every
    /// connection. Requirements with different admission objects (compared by identity) use different pools.
    package var admission: (any ConnectionAdmission)?

    /// Requirements with these parts; the defaults ask for nothing.
    package init(trafficClass: UInt8? = nil, admission: (any ConnectionAdmission)? = nil) {
        self.trafficClass = trafficClass
        self.admission = admission
    }

    package static func == (lhs: ConnectionRequirements, rhs: ConnectionRequirements) -> Bool {
        lhs.trafficClass == rhs.trafficClass
            && lhs.admission.map(ObjectIdentifier.init) == rhs.admission.map(ObjectIdentifier.init)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(trafficClass)
        hasher.combine(admission.map(ObjectIdentifier.init))
    }

    /// Whether these are the defaults (no pool of their own is needed).
    var isEmpty: Bool { trafficClass == nil && admission == nil }
}

/// Decides whether a freshly connected socket may carry requests: an interface rule such as "never over a
/// cellular modem". It is asked once per new connection, with the socket's two addresses, on one of Wire's blocking
/// threads (never an event loop or a Swift concurrency thread), so it may block briefly.
///
/// An object, because its identity is part of the pool key: keep one instance per rule rather than making one per
/// request, or every request gets pools of its own.
package protocol ConnectionAdmission: AnyObject, Sendable {
    /// Why the connection from `local` to `remote` must not be used, or nil to admit it.
    func refusal(local: SocketAddress, remote: SocketAddress) -> String?
}
