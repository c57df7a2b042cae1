/// A `no_proxy` list: the hosts reached directly though a proxy is configured, matched as curl 7.88 matches them
/// (lib/noproxy.c). A pure value: it reads no environment and resolves no name.
///
/// - `*` alone bypasses the proxy for every host (a `*` among other entries is an ordinary entry, matching nothing).
/// - Entries are separated by commas and blanks (spaces, tabs); empty entries are skipped.
/// - A name matches itself and every name below it on a label boundary, without regard to ASCII case:
///   `example.com` and `.example.com` match `example.com` and `www.example.com`, never `notexample.com`. A trailing
///   dot on the entry and on the host is ignored.
/// - When the host is an IPv4 address (a dotted quad, as `inet_pton` reads it), entries are IPv4 addresses or
///   CIDR ranges (`10.0.0.0/8`); an entry without a prefix length, or with `/0`, matches its own address only.
/// - An entry with a port (`example.com:8080`, `10.0.0.1:80`) never matches: curl 7.88 compares it as a whole.
/// - An IPv6 host is compared as text, as curl 7.88 compares the bracket-less host of a URL: `::1` matches `::1`,
///   but `::1/128` or `[::1]` do not. A host given in brackets (`[::1]`) is compared as an address instead, with
///   CIDR ranges (`fe80::/10`).
///
/// ```swift
/// let list = NoProxyList("localhost, .internal,10.0.0.0/8")
/// list.matches(host: "db.internal")   // true
/// list.matches(host: "10.1.2.3")      // true
/// list.matches(host: "example.com")   // false
/// ```
public struct NoProxyList: Hashable, Sendable, CustomStringConvertible {
    /// The list as written.
    public var text: String

    /// A list as written in `no_proxy` or curl's `--noproxy`.
    public init(_ text: String) { self.text = text }

    /// The list as written.
    public var description: String { text }

    /// Whether `host` is reached directly.
    /// - Parameter host: The URL's host: a name, an IPv4 address, an IPv6 address without brackets (compared as
    ///   text, as curl does) or with them (compared as an address).
    public func matches(host: String) -> Bool {
        Self.matches(host: Array(host.utf8.prefix { $0 != 0 }), list: Array(text.utf8.prefix { $0 != 0 }))
    }

    /// Whether the list has entries separated by blanks rather than commas, which curl still reads but calls
    /// deprecated.
    public var usesBlankSeparators: Bool {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            while index < bytes.count, isBlank(bytes[index]) { index += 1 }
            while index < bytes.count, !isBlank(bytes[index]), bytes[index] != UInt8(ascii: ",") { index += 1 }
            while index < bytes.count, isBlank(bytes[index]) { index += 1 }
            if index < bytes.count, bytes[index] != UInt8(ascii: ",") { return true }
            while index < bytes.count, bytes[index] == UInt8(ascii: ",") { index += 1 }
        }
        return false
    }

    private enum HostType {
        case name
        case ipv4(UInt32)
        case ipv6([UInt8])
    }

    private static func matches(host: [UInt8], list: [UInt8]) -> Bool {
        guard !host.isEmpty, !list.isEmpty else { return false }
        if list == [UInt8(ascii: "*")] { return true }
        var name = host[...]
        let type: HostType
        if name.first == UInt8(ascii: "[") {
            guard let close = name.firstIndex(of: UInt8(ascii: "]")) else { return false }
            name = name[(name.startIndex + 1)..<close]
            // curl copies the address into 128 bytes and refuses anything longer.
            guard name.count < 128, let address = IPv6Literal.bytes(name) else { return false }
            type = .ipv6(address)
        } else if let address = IPv4Literal.dottedQuad(name) {
            type = .ipv4(address)
        } else {
            type = .name
            if name.last == UInt8(ascii: ".") { name = name.dropLast() }
        }

        var index = 0
        while index < list.count {
            while index < list.count, isBlank(list[index]) { index += 1 }
            let start = index
            while index < list.count, !isBlank(list[index]), list[index] != UInt8(ascii: ",") { index += 1 }
            let token = list[start..<index]
            if !token.isEmpty, matches(token, name: name, type: type) { return true }
            while index < list.count, isBlank(list[index]) { index += 1 }
            // Another entry after blanks alone: curl reads it (and warns).
            if index < list.count, list[index] != UInt8(ascii: ",") { continue }
            while index < list.count, list[index] == UInt8(ascii: ",") { index += 1 }
        }
        return false
    }

    private static func matches(_ token: ArraySlice<UInt8>, name: ArraySlice<UInt8>, type: HostType) -> Bool {
        switch type {
        case .name:
            var token = token
            if token.last == UInt8(ascii: ".") { token = token.dropLast() }
            if token.first == UInt8(ascii: ".") { token = token.dropFirst() }
            if token.count == name.count { return equalIgnoringCase(token, name) }
            guard token.count < name.count else { return false }
            let tail = name.suffix(token.count)
            return name[tail.startIndex - 1] == UInt8(ascii: ".") && equalIgnoringCase(token, tail)
        case .ipv4(let address):
            guard token.count < 128 else { return false }
            let (network, bits) = splitPrefix(token)
            guard bits <= 32, let check = IPv4Literal.dottedQuad(network) else { return false }
            guard bits != 0, bits != 32 else { return address == check }
            let mask = UInt32.max << (32 - bits)
            return address & mask == check & mask
        case .ipv6(let address):
            guard token.count < 128 else { return false }
            var (network, bits) = splitPrefix(token)
            if bits == 0 { bits = 128 }
            guard bits <= 128, let check = IPv6Literal.bytes(network) else { return false }
            let whole = Int(bits / 8)
            let rest = bits % 8
            guard address.prefix(whole) == check.prefix(whole) else { return false }
            guard rest != 0 else { return true }
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - rest))
            return (address[whole] ^ check[whole]) & mask == 0
        }
    }

    /// The address before a `/` and the prefix length after it, read as C's `atoi` reads it (and, as curl does,
    /// taken as unsigned: a negative length is larger than any address has). No slash: 0.
    private static func splitPrefix(_ token: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, UInt32) {
        guard let slash = token.firstIndex(of: UInt8(ascii: "/")) else { return (token, 0) }
        return (token[..<slash], UInt32(truncatingIfNeeded: atoi(token[(slash + 1)...])))
    }

    /// C's `atoi`: leading white space, a sign, decimal digits, anything after ignored; glibc saturates the `long`
    /// and truncates it to `int`.
    private static func atoi(_ bytes: ArraySlice<UInt8>) -> Int32 {
        var rest = bytes.drop { $0 == 0x20 || (0x09...0x0D).contains($0) }
        var negative = false
        if let sign = rest.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            rest = rest.dropFirst()
        }
        var value: Int64 = 0
        var saturated = false
        for byte in rest {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            if overflow1 || overflow2 {
                saturated = true
                break
            }
            value = sum
        }
        let long: Int64 = saturated ? (negative ? .min : .max) : (negative ? -value : value)
        return Int32(truncatingIfNeeded: long)
    }

    private static func equalIgnoringCase(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        a.count == b.count
            && zip(a, b).allSatisfy { ProxyURLParser.asciiLowercased($0) == ProxyURLParser.asciiLowercased($1) }
    }
}

private func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

/// IPv4 literals, read as glibc and curl read them.
enum IPv4Literal {
    /// A dotted quad as glibc's `inet_pton(AF_INET)` reads it: four decimal numbers up to 255, no leading zero, no
    /// other character. The address with its first octet in the high byte.
    static func dottedQuad(_ text: some Collection<UInt8>) -> UInt32? {
        var octets: [UInt32] = []
        var current: UInt32 = 0
        var sawDigit = false
        for byte in text {
            if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                if sawDigit, current == 0 { return nil }
                current = current * 10 + UInt32(byte - UInt8(ascii: "0"))
                guard current <= 255 else { return nil }
                if !sawDigit {
                    guard octets.count < 4 else { return nil }
                    sawDigit = true
                }
            } else if byte == UInt8(ascii: "."), sawDigit {
                guard octets.count < 3 else { return nil }
                octets.append(current)
                current = 0
                sawDigit = false
            } else {
                return nil
            }
        }
        guard sawDigit, octets.count == 3 else { return nil }
        octets.append(current)
        return octets.reduce(0) { $0 << 8 | $1 }
    }

    /// What curl's URL parser makes of a host that is a number (lib/urlapi.c `ipv4_normalize`): one to four parts
    /// separated by dots, each decimal, octal (a leading `0`) or hexadecimal (`0x`), the last filling the bits the
    /// others leave (`127.1`, `0x7f000001`). The dotted quad, or nil when the host is not such a number.
    static func curlNormalized(_ text: some Collection<UInt8>) -> String? {
        let bytes = Array(text)
        var parts: [UInt64] = []
        var index = 0
        while true {
            guard index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") else {
                return nil
            }
            guard let (value, end) = strtoul(bytes, from: index), value <= UInt64(UInt32.max) else { return nil }
            parts.append(value)
            index = end
            if index == bytes.count { break }
            guard bytes[index] == UInt8(ascii: "."), parts.count < 4 else { return nil }
            index += 1
        }
        let address: UInt64
        switch parts.count {
        case 1:
            address = parts[0]
        case 2:
            guard parts[0] <= 0xFF, parts[1] <= 0xFF_FFFF else { return nil }
            address = parts[0] << 24 | parts[1]
        case 3:
            guard parts[0] <= 0xFF, parts[1] <= 0xFF, parts[2] <= 0xFFFF else { return nil }
            address = parts[0] << 24 | parts[1] << 16 | parts[2]
        default:
            guard parts.allSatisfy({ $0 <= 0xFF }) else { return nil }
            address = parts[0] << 24 | parts[1] << 16 | parts[2] << 8 | parts[3]
        }
        return "\(address >> 24 & 0xFF).\(address >> 16 & 0xFF).\(address >> 8 & 0xFF).\(address & 0xFF)"
    }

    /// C's `strtoul(text, &end, 0)` from a digit: `0x` hexadecimal, a leading `0` octal, else decimal. Nil on
    /// overflow of 64 bits (curl refuses `ULONG_MAX` with `ERANGE`).
    private static func strtoul(_ bytes: [UInt8], from start: Int) -> (UInt64, Int)? {
        var index = start
        var radix: UInt64 = 10
        if bytes[index] == UInt8(ascii: "0") {
            if index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "x") || bytes[index + 1] == UInt8(ascii: "X"),
                PercentEncoding.hexValue(bytes[index + 2]) != nil
            {
                radix = 16
                index += 2
            } else {
                radix = 8
            }
        }
        var value: UInt64 = 0
        while index < bytes.count {
            let digit: UInt64
            switch radix {
            case 16:
                guard let hex = PercentEncoding.hexValue(bytes[index]) else { return (value, index) }
                digit = UInt64(hex)
            case 8:
                guard bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "7") else { return (value, index) }
                digit = UInt64(bytes[index] - UInt8(ascii: "0"))
            default:
                guard bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") else { return (value, index) }
                digit = UInt64(bytes[index] - UInt8(ascii: "0"))
            }
            let (times, overflow1) = value.multipliedReportingOverflow(by: radix)
            let (sum, overflow2) = times.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { return nil }
            value = sum
            index += 1
        }
        return (value, index)
    }
}

/// IPv6 literals, read by the system's `inet_pton` through `SocketAddress`.
enum IPv6Literal {
    /// The 16 bytes of an IPv6 address written without brackets or zone, or nil.
    static func bytes(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard !text.contains(UInt8(ascii: "%")),
            let address = try? SocketAddress(ipAddress: String(decoding: text, as: UTF8.self), port: 0),
            case .v6(let high, let low, _, _) = address.storage
        else { return nil }
        return (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// The address as `inet_ntop` writes it, or nil when `text` is not an IPv6 address.
    static func presentation(_ text: some Collection<UInt8>) -> String? {
        guard !text.contains(UInt8(ascii: "%")),
            let address = try? SocketAddress(ipAddress: String(decoding: text, as: UTF8.self), port: 0),
            address.family == .ipv6
        else { return nil }
        return address.host
    }
}
