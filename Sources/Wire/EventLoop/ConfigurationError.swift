/// A setting that cannot work, refused when the object using it is made rather than by a trap at
/// its first use.
///
/// `EventLoopGroup.init` throws it; `HTTPClient` and `HTTPServer` carry it inside their own errors
/// (`HTTPClientError.configurationError`, `HTTPServerError.underlying`) under an
/// `invalidConfiguration` code.
///
/// ```swift
/// var configuration = HTTPClientConfiguration()
/// configuration.maxConnectionsPerHost = 0
/// try configuration.validate()   // throws: maxConnectionsPerHost is 0; it must be at least 1
/// ```
public struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The setting, spelled as in code (`maxConnectionsPerHost`, `pipelining.maxInFlight`).
    public let field: String
    /// The refused value, as text.
    public let value: String
    /// What the setting must be (`at least 1`).
    public let requirement: String

    /// Creates an error.
    /// - Parameters:
    ///   - field: The setting's name.
    ///   - value: The refused value.
    ///   - requirement: What the value must be.
    public init(field: String, value: String, requirement: String) {
        self.field = field
        self.value = value
        self.requirement = requirement
    }

    /// `field is value; it must be requirement`.
    public var description: String { "\(field) is \(value); it must be \(requirement)" }

    /// Throws unless `value` is at least `minimum`.
    static func require(_ field: String, _ value: Int, atLeast minimum: Int) throws(ConfigurationError) {
        guard value >= minimum else {
            throw ConfigurationError(field: field, value: "\(value)", requirement: "at least \(minimum)")
        }
    }

    /// Throws unless `value` is positive (a timeout of zero or less cannot be met).
    static func requirePositive(_ field: String, _ value: Duration) throws(ConfigurationError) {
        guard value > .zero else { throw ConfigurationError(field: field, value: "\(value)", requirement: "more than zero") }
    }

    /// Throws if `value` is negative.
    static func requireNotNegative(_ field: String, _ value: Duration) throws(ConfigurationError) {
        guard value >= .zero else { throw ConfigurationError(field: field, value: "\(value)", requirement: "zero or more") }
    }
}
