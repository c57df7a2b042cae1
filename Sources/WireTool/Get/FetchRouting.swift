import Wire

/// Where `wire get` connects, as curl 7.88 decides it: `--connect-to` first (another host and port for the socket,
/// while TLS and HTTP still speak to the URL's host), then `--resolve` (addresses for a host and port, `*` for any
/// host, tried after the named ones), then the system's resolver; `-4`/`-6` keep one family of what comes out.
struct FetchRouting: Resolver {
    /// One `--resolve` entry.
    struct Entry: Sendable {
        var addresses: [SocketAddress]
        /// A `+` entry stands for curl's DNS cache timeout (60 s), after which the name is resolved as usual.
        var expires: ContinuousClock.Instant?
    }

    /// `--resolve`'s table, keyed `host:port` with the host lower-cased (`*:port` for the wildcard).
    let entries: [String: Entry]
    /// `--connect-to`'s entries, in order.
    let connectTo: [String]
    /// `-4`/`-6`.
    let family: SocketAddress.Family?
    private let system = SystemResolver()

    /// The routing of `options`, or nil when nothing changes the system's resolution.
    ///
    /// - Throws: `TransferFailure` 49 for a `--resolve` entry curl cannot parse, naming it as curl does.
    init?(_ options: FetchOptions.RoutingOptions, now: ContinuousClock.Instant = .now) throws(TransferFailure) {
        guard !options.resolve.isEmpty || !options.connectTo.isEmpty || options.family != nil else { return nil }
        var entries: [String: Entry] = [:]
        for text in options.resolve {
            if text.hasPrefix("-") {
                // Removal of an earlier entry; a malformed one is ignored, as curl only notes it.
                let parts = text.dropFirst().split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                if parts.count == 2, !parts[0].isEmpty, let port = Self.leadingNumber(parts[1]), port <= 0xFFFF {
                    entries[parts[0].lowercased() + ":\(port)"] = nil
                }
                continue
            }
            guard let (key, entry) = Self.entry(text, now: now) else {
                throw TransferFailure(status: ExitStatus.optionSyntax, message: "Couldn't parse --resolve entry '\(text)'")
            }
            entries[key] = entry
        }
        self.entries = entries
        connectTo = options.connectTo
        family = options.family
    }

    /// `[+]HOST:PORT:ADDR[,ADDR]...` as curl 7.88 reads it; nil for what it refuses.
    static func entry(_ text: String, now: ContinuousClock.Instant) -> (String, Entry)? {
        var rest = Substring(text)
        var expires: ContinuousClock.Instant?
        if rest.hasPrefix("+") {
            rest = rest.dropFirst()
            expires = now + .seconds(60)
        }
        guard let hostEnd = rest.firstIndex(of: ":") else { return nil }
        let host = rest[..<hostEnd]
        let afterHost = rest[rest.index(after: hostEnd)...]
        guard let portEnd = afterHost.firstIndex(of: ":"), let port = leadingNumber(afterHost[..<portEnd]),
            port <= 0xFFFF
        else { return nil }
        var addresses: [SocketAddress] = []
        for piece in afterHost[afterHost.index(after: portEnd)...].split(separator: ",", omittingEmptySubsequences: false) {
            var address = piece
            if address.hasPrefix("[") {
                guard address.hasSuffix("]"), address.count >= 2 else { return nil }
                address = address.dropFirst().dropLast()
            }
            if address.isEmpty { continue }
            guard address.count < 64, !address.contains("%"),
                let parsed = try? SocketAddress(ipAddress: String(address), port: port)
            else { return nil }
            addresses.append(parsed)
        }
        guard !addresses.isEmpty else { return nil }
        return (host.lowercased() + ":\(port)", Entry(addresses: addresses, expires: expires))
    }

    /// What `strtoul` reads at the start of `text` when the whole of it is that number (blanks and `+` before the
    /// digits allowed); nil otherwise.
    static func leadingNumber(_ text: Substring) -> Int? {
        var digits = text.drop { $0 == " " || $0 == "\t" }
        if digits.hasPrefix("+") { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }

    /// Where a connection for `host:port` goes with `--connect-to`: the first entry that matches (curl compares the
    /// host as text, without case, an IPv6 address in brackets, and the port as a number; an empty part matches
    /// anything); nil when none does or those that do name neither host nor port.
    ///
    /// - Throws: `TransferFailure` 49 for a matching entry whose port is not a number from 0 to 65535.
    static func connectTarget(_ entries: [String], host: String, port: Int) throws(TransferFailure)
        -> (host: String?, port: Int?)?
    {
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let name = bare.contains(":") ? "[\(bare)]" : bare
        for entry in entries {
            var rest = Substring(entry)
            if rest.hasPrefix(":") {
                rest = rest.dropFirst()
            } else {
                guard rest.count > name.count, rest.prefix(name.count).lowercased() == name.lowercased(),
                    rest.dropFirst(name.count).first == ":"
                else { continue }
                rest = rest.dropFirst(name.count + 1)
            }
            if rest.hasPrefix(":") {
                rest = rest.dropFirst()
            } else {
                guard let colon = rest.firstIndex(of: ":"), Self.leadingNumber(rest[..<colon]) == port else { continue }
                rest = rest[rest.index(after: colon)...]
            }
            let target = try hostAndPort(rest)
            if target.host != nil || target.port != nil { return target }
        }
        return nil
    }

    /// `HOST2:PORT2` (either may be empty; an IPv6 address in brackets).
    private static func hostAndPort(_ text: Substring) throws(TransferFailure) -> (host: String?, port: Int?) {
        var host = text
        var portSearch = text
        if text.hasPrefix("[") {
            let inside = text.dropFirst()
            let end = inside.firstIndex(of: "]") ?? inside.endIndex
            host = inside[..<end]
            portSearch = end < inside.endIndex ? inside[inside.index(after: end)...] : inside[end...]
        }
        var port: Int?
        if let colon = portSearch.firstIndex(of: ":") {
            if !text.hasPrefix("[") { host = text[..<colon] }
            let portText = portSearch[portSearch.index(after: colon)...]
            if !portText.isEmpty {
                guard let number = Int(portText), (0...65535).contains(number) else {
                    throw TransferFailure(
                        status: ExitStatus.optionSyntax,
                        message: "No valid port number in connect to host string (\(portText))")
                }
                port = number
            }
        }
        return (host.isEmpty ? nil : String(host), port)
    }

    func resolve(host: String, port: Int) async throws -> [SocketAddress] {
        var target = (host: host, port: port)
        // An entry with a bad port was refused before the request (RequestBuilder.plan); here it only matches.
        if let redirected = try? Self.connectTarget(connectTo, host: host, port: port) {
            target = (redirected.host ?? host, redirected.port ?? port)
        }
        let bare = target.host.hasPrefix("[") ? String(target.host.dropFirst().dropLast()) : target.host
        var addresses: [SocketAddress]
        let now = ContinuousClock.now
        let named = entries[bare.lowercased() + ":\(target.port)"] ?? entries["*:\(target.port)"]
        if let named, named.expires.map({ now < $0 }) ?? true {
            addresses = named.addresses.map { $0.withPort(target.port) }
        } else {
            addresses = try await system.resolve(host: bare, port: target.port)
        }
        if let family {
            addresses = addresses.filter { $0.family == family }
            if addresses.isEmpty { throw FamilyExcluded(family: family) }
        }
        return addresses
    }

    /// `-4` or `-6` left no address.
    struct FamilyExcluded: Error, CustomStringConvertible {
        let family: SocketAddress.Family
        var description: String { "no \(family == .ipv4 ? "IPv4" : "IPv6") address (\(family == .ipv4 ? "-4" : "-6"))" }
    }
}
