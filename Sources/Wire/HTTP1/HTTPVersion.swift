/// An HTTP protocol version (RFC 9110 §2.5): a major and a minor digit.
public struct HTTPVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The major version digit.
    public var major: UInt8
    /// The minor version digit.
    public var minor: UInt8

    /// Creates a version.
    /// - Parameters:
    ///   - major: The major digit, 0 through 9 on the wire.
    ///   - minor: The minor digit, 0 through 9 on the wire.
    public init(major: UInt8, minor: UInt8) {
        self.major = major
        self.minor = minor
    }

    /// HTTP/1.0.
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    /// HTTP/1.1.
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    /// The version as it appears on the wire, e.g. `HTTP/1.1`.
    public var description: String { "HTTP/\(major).\(minor)" }

    /// Orders versions by major, then minor digit.
    public static func < (lhs: HTTPVersion, rhs: HTTPVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }
}
