import FoundationEssentials
import Synchronization
@_spi(Locking) public import Wire

/// Where a credential applies (NSURLProtectionSpace): the origin, the realm and the scheme a 401 or 407 named.
public struct ProtectionSpace: Sendable, Hashable, Codable {
    /// The host, lower-cased.
    public var host: String
    /// The port (the scheme's default when the URL has none).
    public var port: Int
    /// `http` or `https`.
    public var urlScheme: String
    /// The authentication scheme of the challenge, lower-cased (`basic`, `bearer`, `digest`, ...).
    public var authenticationMethod: String
    /// The `realm` parameter of the challenge, if any.
    public var realm: String?
    /// Whether the challenge came from a proxy (407, `Proxy-Authenticate`).
    public var isProxy: Bool

    /// A protection space.
    public init(host: String, port: Int, urlScheme: String, authenticationMethod: String, realm: String?, isProxy: Bool = false) {
        self.host = host.lowercased()
        self.port = port
        self.urlScheme = urlScheme.lowercased()
        self.authenticationMethod = authenticationMethod.lowercased()
        self.realm = realm
        self.isProxy = isProxy
    }

    /// The protection space of an HTTP proxy: its host and port, its scheme (`http`, or `https` for a proxy reached
    /// over TLS), `isProxy` true. For `CredentialStorage`: a proxy's credentials are kept apart from any origin's,
    /// even on the same host and port.
    /// - Parameters:
    ///   - proxy: The proxy.
    ///   - authenticationMethod: The challenge's scheme; `basic` by default.
    ///   - realm: The challenge's realm (tinyproxy's and Squid's are the proxy's configured name), if any.
    public init(proxy: Proxy, authenticationMethod: String = "basic", realm: String?) {
        self.init(
            host: proxy.host, port: proxy.port, urlScheme: proxy.kind.rawValue,
            authenticationMethod: authenticationMethod, realm: realm, isProxy: true)
    }
}

/// A 401 or 407 with a challenge, as the `taskDidReceiveAuthenticationChallenge` hook sees it.
public struct AuthenticationChallenge: Sendable {
    /// What is asked for, and where.
    public var protectionSpace: ProtectionSpace
    /// How many answers for this protection space the task has already had refused.
    public var previousFailureCount: Int
    /// The response carrying the challenge.
    public var response: ClientResponse
    /// The Digest challenge chosen (the strongest the server offered), when the protection space's method is
    /// `digest`: a user and password given for it are sent as a Digest answer (RFC 7616), as NSURLSession does.
    package var digest: DigestChallenge?

    /// The challenge's scheme, lower-cased (`basic`, `bearer`, ...).
    public var scheme: String { protectionSpace.authenticationMethod }
    /// The challenge's realm, if any.
    public var realm: String? { protectionSpace.realm }
    /// The host that asked.
    public var host: String { protectionSpace.host }
    /// The port of the host that asked.
    public var port: Int { protectionSpace.port }

    /// A challenge.
    public init(protectionSpace: ProtectionSpace, previousFailureCount: Int, response: ClientResponse) {
        self.protectionSpace = protectionSpace
        self.previousFailureCount = previousFailureCount
        self.response = response
    }

    /// The challenge of a 401 (`WWW-Authenticate`) or 407 (`Proxy-Authenticate`) to `url`; nil for any other
    /// response or one without the field. Of a 401's challenges, the first Digest one the client can answer is taken
    /// (Digest before Basic, as NSURLSession and curl's `--anyauth` prefer it; RFC 7616 §3.7's order among Digest
    /// ones); otherwise the first challenge.
    static func parse(_ response: ClientResponse, url: URL, previousFailureCount: Int) -> AuthenticationChallenge? {
        let isProxy = response.statusCode == 407
        guard response.statusCode == 401 || isProxy else { return nil }
        let urlScheme = url.scheme?.lowercased() ?? "http"
        let host = url.host ?? ""
        let port = url.port ?? (urlScheme == "https" ? 443 : 80)
        if !isProxy,
            let digest = DigestChallenge.preferred(in: AuthenticationChallengeField.parse(response.headers["WWW-Authenticate"]))
        {
            let space = ProtectionSpace(
                host: host, port: port, urlScheme: urlScheme, authenticationMethod: "digest", realm: digest.realm)
            var challenge = AuthenticationChallenge(
                protectionSpace: space, previousFailureCount: previousFailureCount, response: response)
            challenge.digest = digest
            return challenge
        }
        return parse(
            response, field: isProxy ? "Proxy-Authenticate" : "WWW-Authenticate", host: host, port: port,
            urlScheme: urlScheme, isProxy: isProxy, previousFailureCount: previousFailureCount)
    }

    /// The challenge of a 407 (`Proxy-Authenticate`) from `proxy`, for the proxy's protection space (its host, port
    /// and scheme, not the origin's); nil for any other response or one without the field.
    static func parse(_ response: ClientResponse, proxy: Proxy) -> AuthenticationChallenge? {
        guard response.statusCode == 407 else { return nil }
        return parse(
            response, field: "Proxy-Authenticate", host: proxy.host, port: proxy.port, urlScheme: proxy.kind.rawValue,
            isProxy: true, previousFailureCount: 0)
    }

    /// The first challenge of the response's `field`, for the protection space at `host` and `port`.
    private static func parse(
        _ response: ClientResponse, field name: String, host: String, port: Int, urlScheme: String, isProxy: Bool,
        previousFailureCount: Int
    ) -> AuthenticationChallenge? {
        guard let field = response.value(forHTTPHeaderField: name) else { return nil }
        let trimmed = field.drop { $0 == " " || $0 == "\t" }
        let scheme = trimmed.prefix { $0 != " " && $0 != "\t" && $0 != "," }
        guard !scheme.isEmpty else { return nil }
        let space = ProtectionSpace(
            host: host, port: port, urlScheme: urlScheme, authenticationMethod: String(scheme),
            realm: realmParameter(of: trimmed.dropFirst(scheme.count)), isProxy: isProxy)
        return AuthenticationChallenge(protectionSpace: space, previousFailureCount: previousFailureCount, response: response)
    }

    /// The `realm` auth-param (RFC 9110 §11.2: token or quoted-string) of the first challenge's parameters.
    private static func realmParameter(of parameters: Substring) -> String? {
        let bytes = Array(parameters.utf8)
        let key = Array("realm=".utf8)
        // Only a parameter name counts: `realm=` at the start or after a comma or whitespace, outside a quoted string
        // (not inside another parameter's value, nor the tail of `xrealm=`).
        var start: Int?
        var quoted = false
        var escaping = false
        var offset = 0
        while offset + key.count <= bytes.count {
            let byte = bytes[offset]
            if quoted {
                if escaping {
                    escaping = false
                } else if byte == UInt8(ascii: "\\") {
                    escaping = true
                } else if byte == UInt8(ascii: "\"") {
                    quoted = false
                }
            } else if byte == UInt8(ascii: "\"") {
                quoted = true
            } else if offset == 0 || [UInt8(ascii: ","), UInt8(ascii: " "), UInt8(ascii: "\t")].contains(bytes[offset - 1]),
                // ASCII case folding: `| 0x20` lower-cases letters and leaves `=` as it is.
                (0..<key.count).allSatisfy({ bytes[offset + $0] | 0x20 == key[$0] | 0x20 })
            {
                start = offset
                break
            }
            offset += 1
        }
        guard let start else { return nil }
        let value = Substring(decoding: bytes[(start + key.count)...], as: UTF8.self)
        guard value.first == "\"" else {
            let token = value.prefix { $0 != "," && $0 != " " && $0 != "\t" }
            return token.isEmpty ? nil : String(token)
        }
        var realm = ""
        var escaped = false
        for character in value.dropFirst() {
            if escaped {
                realm.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                return realm
            } else {
                realm.append(character)
            }
        }
        return nil  // an unterminated quoted string names no realm
    }
}

/// The answer to an authentication challenge.
public enum AuthenticationChallengeDisposition: Sendable, Hashable {
    /// Replay the request with these credentials (`Authorization`, or `Proxy-Authorization` for a 407): as a Digest
    /// answer (RFC 7616) to a server's Digest challenge, else Basic. A credential refused once for the protection
    /// space is not sent again: the 401 is delivered (a Digest answer refused only for a stale nonce is retried with
    /// the new one).
    case useCredential(user: String, password: String)
    /// Replay the request with this `Authorization` (or `Proxy-Authorization`) value, for any scheme; not sent twice.
    case useAuthorization(String)
    /// Use the configuration's `credentialStorage` for the protection space; without a credential there, deliver the
    /// response.
    case performDefaultHandling
    /// Fail the task with `.cancelled` (−999).
    case cancel
    /// Deliver the response as it is.
    case rejectProtectionSpace
}

/// Credentials by protection space (NSURLCredentialStorage), for `.performDefaultHandling`. Thread-safe.
public final class CredentialStorage: Sendable {
    private let credentials = Lock<[ProtectionSpace: (user: String, password: String)]>([:])

    /// An empty store.
    public init() {}

    /// Stores the Basic credential for a protection space, replacing any.
    public func setCredential(user: String, password: String, for space: ProtectionSpace) {
        credentials.withLock { $0[space] = (user, password) }
    }

    /// The credential for a protection space, if any.
    public func credential(for space: ProtectionSpace) -> (user: String, password: String)? {
        credentials.withLock { $0[space] }
    }

    /// Forgets the credential for a protection space.
    public func removeCredential(for space: ProtectionSpace) {
        credentials.withLock { _ = $0.removeValue(forKey: space) }
    }
}
