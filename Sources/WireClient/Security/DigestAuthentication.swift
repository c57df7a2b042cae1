import WireTLS

/// One challenge of a `WWW-Authenticate` or `Proxy-Authenticate` field (RFC 9110 §11.6.1): its scheme and its
/// auth-params, or its token68.
package struct AuthenticationChallengeField: Sendable, Hashable {
    /// The scheme, lower-cased (`basic`, `digest`, `bearer`…).
    package var scheme: String
    /// The auth-params by lower-cased name, quoted strings unquoted; the first of a repeated name wins.
    package var parameters: [String: String]
    /// The token68 form's value (`Negotiate abc==`), nil for the parameter form.
    package var token68: String?

    /// Every challenge in the field values, in order. A field may hold several challenges separated by commas
    /// (`Digest realm="a", nonce="b", Basic realm="a"`), and a response several fields. Malformed parts end the
    /// challenge they are in; nothing is trusted to be well formed.
    package static func parse(_ values: [String]) -> [AuthenticationChallengeField] {
        var challenges: [AuthenticationChallengeField] = []
        for value in values {
            var scanner = Scanner(Array(value.utf8))
            while let challenge = scanner.challenge() { challenges.append(challenge) }
        }
        return challenges
    }

    /// Reads challenges from bytes: RFC 9110's `challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ]`.
    private struct Scanner {
        let bytes: [UInt8]
        var offset = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        static func isTokenByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
            }
        }

        var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { offset += 1 }
        }

        mutating func skipSeparators() {
            while let byte = current, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: ",") {
                offset += 1
            }
        }

        mutating func token() -> String? {
            let start = offset
            while let byte = current, Self.isTokenByte(byte) { offset += 1 }
            return offset > start ? String(decoding: bytes[start..<offset], as: UTF8.self) : nil
        }

        /// A quoted-string's content (after the opening quote), escapes removed; nil if it does not end.
        mutating func quotedString() -> String? {
            var content: [UInt8] = []
            while let byte = current {
                offset += 1
                if byte == UInt8(ascii: "\"") { return String(decoding: content, as: UTF8.self) }
                if byte == UInt8(ascii: "\\") {
                    guard let escaped = current else { return nil }
                    offset += 1
                    content.append(escaped)
                } else {
                    content.append(byte)
                }
            }
            return nil
        }

        mutating func challenge() -> AuthenticationChallengeField? {
            var scheme: String?
            while scheme == nil {
                skipSeparators()
                guard current != nil else { return nil }
                scheme = token()
                // Not a challenge here: skip to the next comma (a loop, not recursion: a peer may send many).
                if scheme == nil { while let byte = current, byte != UInt8(ascii: ",") { offset += 1 } }
            }
            var result = AuthenticationChallengeField(scheme: scheme!.lowercased(), parameters: [:], token68: nil)
            skipWhitespace()
            // token68: token characters and `/`, then `=` padding, then the end or a comma (`Negotiate abc==`).
            let start = offset
            while let byte = current, Self.isTokenByte(byte) || byte == UInt8(ascii: "/") { offset += 1 }
            let wordEnd = offset
            while current == UInt8(ascii: "=") { offset += 1 }
            let afterPadding = offset
            skipWhitespace()
            if wordEnd > start, current == nil || current == UInt8(ascii: ",") {
                result.token68 = String(decoding: bytes[start..<afterPadding], as: UTF8.self)
                return result
            }
            offset = start
            // auth-params: name BWS "=" BWS ( token / quoted-string ), comma-separated; a name not followed by "="
            // begins the next challenge.
            while true {
                skipSeparators()
                let itemStart = offset
                guard let name = token() else { return result }
                skipWhitespace()
                guard current == UInt8(ascii: "=") else {
                    offset = itemStart
                    return result
                }
                offset += 1
                skipWhitespace()
                let value: String
                if current == UInt8(ascii: "\"") {
                    offset += 1
                    guard let quoted = quotedString() else { return result }
                    value = quoted
                } else {
                    guard let plain = token() else { return result }
                    value = plain
                }
                let key = name.lowercased()
                if result.parameters[key] == nil { result.parameters[key] = value }
            }
        }
    }
}

/// A Digest challenge (RFC 7616) and the `Authorization` value that answers it: MD5, SHA-256 and SHA-512-256, each
/// also as `-sess`; `qop=auth` (or none, RFC 2069's form, for an old server), a nonce count and a client nonce;
/// `userhash` when the server asks for it. `auth-int` alone, or an algorithm outside RFC 7616, is not answered.
package struct DigestChallenge: Sendable, Hashable {
    package var realm: String
    package var nonce: String
    package var opaque: String?
    package var algorithm: MessageDigest.Algorithm
    /// `-sess`: the first hash also covers the nonce and the client nonce.
    package var isSession: Bool
    /// Whether the server offered `qop=auth` (else the RFC 2069 form, without a client nonce).
    package var offersAuthQOP: Bool
    /// The server asks for the user name hashed (`userhash=true`).
    package var userhash: Bool
    /// The server says an earlier answer failed only because its nonce went stale (`stale=true`).
    package var isStale: Bool
    /// The algorithm as the challenge spelled it, echoed in the answer (`MD5` when the challenge named none).
    package var algorithmName: String

    /// The Digest challenge in `field`, or nil when it is not Digest, lacks a nonce or realm, or asks for what is not
    /// supported (another algorithm, `auth-int` only).
    package init?(_ field: AuthenticationChallengeField) {
        guard field.scheme == "digest", let nonce = field.parameters["nonce"], let realm = field.parameters["realm"]
        else { return nil }
        let named = field.parameters["algorithm"] ?? "MD5"
        var base = named.uppercased()
        isSession = base.hasSuffix("-SESS")
        if isSession { base.removeLast(5) }
        switch base {
        case "MD5": algorithm = .md5
        case "SHA-256": algorithm = .sha256
        case "SHA-512-256": algorithm = .sha512_256
        default: return nil
        }
        if let qop = field.parameters["qop"] {
            let options = qop.split(separator: ",").map { $0.trimmingWhitespace().lowercased() }
            guard options.contains("auth") else { return nil }
            offersAuthQOP = true
        } else {
            offersAuthQOP = false
        }
        self.realm = realm
        self.nonce = nonce
        opaque = field.parameters["opaque"]
        userhash = field.parameters["userhash"]?.lowercased() == "true"
        isStale = field.parameters["stale"]?.lowercased() == "true"
        algorithmName = named
    }

    /// The response hash (RFC 7616 §3.4.1): `KD(H(A1), nonce:nc:cnonce:qop:H(A2))` with `qop=auth`, or
    /// `KD(H(A1), nonce:H(A2))` without.
    package func response(
        user: String, password: String, method: String, uri: String, clientNonce: String, nonceCount: Int
    ) -> String {
        let hash = { (text: String) in MessageDigest.hexDigest(Array(text.utf8), algorithm) }
        var a1 = hash("\(user):\(realm):\(password)")
        if isSession { a1 = hash("\(a1):\(nonce):\(clientNonce)") }
        let a2 = hash("\(method):\(uri)")
        guard offersAuthQOP else { return hash("\(a1):\(nonce):\(a2)") }
        return hash("\(a1):\(nonce):\(Self.nonceCountText(nonceCount)):\(clientNonce):auth:\(a2)")
    }

    /// The `Authorization` (or `Proxy-Authorization`) value answering the challenge for a request of `method` to
    /// `uri` (its request target), the `nonceCount`-th use of this nonce.
    package func authorization(
        user: String, password: String, method: String, uri: String, nonceCount: Int = 1,
        clientNonce: String = DigestChallenge.makeClientNonce()
    ) -> String {
        let name = userhash ? MessageDigest.hexDigest(Array("\(user):\(realm)".utf8), algorithm) : user
        let response = response(
            user: user, password: password, method: method, uri: uri, clientNonce: clientNonce, nonceCount: nonceCount)
        var parts = [
            "username=\(Self.quoted(name))", "realm=\(Self.quoted(realm))", "nonce=\(Self.quoted(nonce))",
            "uri=\(Self.quoted(uri))",
        ]
        if offersAuthQOP {
            parts += ["cnonce=\(Self.quoted(clientNonce))", "nc=\(Self.nonceCountText(nonceCount))", "qop=auth"]
        }
        parts.append("response=\(Self.quoted(response))")
        if let opaque { parts.append("opaque=\(Self.quoted(opaque))") }
        parts.append("algorithm=\(algorithmName)")
        if userhash { parts.append("userhash=true") }
        return "Digest " + parts.joined(separator: ", ")
    }

    /// 16 random bytes as 32 hexadecimal digits.
    package static func makeClientNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for _ in 0..<16 {
            let byte = UInt8.random(in: 0...255, using: &generator)
            text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The nonce count as 8 hexadecimal digits (`00000001`).
    static func nonceCountText(_ count: Int) -> String {
        let hex = String(UInt32(truncatingIfNeeded: count), radix: 16)
        return String(repeating: "0", count: max(0, 8 - hex.count)) + hex
    }

    /// A quoted-string, `"` and `\` escaped.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for character in text {
            if character == "\"" || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result + "\""
    }

    /// The first Digest challenge among `fields` that can be answered, nil when there is none: a server lists its
    /// challenges in its order of preference and the client takes the first it supports (RFC 7616 §3.7), as curl
    /// does.
    package static func preferred(in fields: [AuthenticationChallengeField]) -> DigestChallenge? {
        fields.lazy.compactMap(DigestChallenge.init).first
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
