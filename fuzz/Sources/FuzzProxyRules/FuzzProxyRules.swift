import FuzzSupport
@testable import Wire

/// libFuzzer entry: the input is a host, a `no_proxy` list and a proxy URL, separated by NUL bytes. The matcher, the
/// proxy URL reader, the host canonicalisation and the route must never trap, and:
/// - `*` alone matches every host;
/// - a host (not a bracketed one) listed matches itself, whatever else the list holds;
/// - a list joined by a comma matches exactly what either half matches (neither half `*`);
/// - matching ignores ASCII case;
/// - a proxy read from a URL writes a URL that reads back, and reading that again changes nothing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProxyRules(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    let parts = input.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false).map {
        String(decoding: $0, as: UTF8.self)
    }
    let host = parts[0]
    let list = parts.count > 1 ? parts[1] : ""
    let proxyText = parts.count > 2 ? parts[2] : ""
    func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { propertyFailed(message(), input: input) }
    }

    let matched = NoProxyList(list).matches(host: host)
    if !host.isEmpty, !host.utf8.contains(0) {
        check(NoProxyList("*").matches(host: host), "* did not match \(host)")
        let listable = !host.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        if listable, host.utf8.first != UInt8(ascii: "[") {
            check(NoProxyList(list + "," + host).matches(host: host), "\(host) listed did not match itself")
        }
    }
    let halves = list.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    if halves.count == 2, halves[0] != "*", halves[1] != "*", !list.utf8.contains(0) {
        let either = NoProxyList(halves[0]).matches(host: host) || NoProxyList(halves[1]).matches(host: host)
        check(matched == either, "'\(list)' is not the union of its halves for \(host)")
    }
    let upper = String(decoding: host.utf8.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 32 : $0 }, as: UTF8.self)
    check(NoProxyList(list).matches(host: upper) == matched, "case changed the match of \(host)")

    _ = ProxyRoute.canonicalHost(host)
    let environment = ProxyEnvironment(["http_proxy": proxyText, "no_proxy": list])
    _ = try? ProxyRoute.resolve(scheme: "http", host: host, environment: environment)

    for kind in [Proxy.Kind.http, .socks5h] {
        guard let proxy = try? Proxy(parsing: proxyText, defaultKind: kind) else { continue }
        check((0...65535).contains(proxy.port), "port \(proxy.port)")
        let again: Proxy
        do {
            again = try Proxy(parsing: proxy.urlIncludingCredentials)
        } catch {
            propertyFailed("\(proxy) wrote a URL that reads as \(error)", input: input)
        }
        check(again.kind == proxy.kind && again.port == proxy.port && again.credentials == proxy.credentials, "\(proxy) → \(again)")
        check((try? Proxy(parsing: again.urlIncludingCredentials)) == again, "\(again) changed when read again")
    }
    return 0
}

/// The executable's entry (see `runLibFuzzer`).
@_cdecl("FuzzProxyRules_main")
public func fuzzProxyRulesMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc: argc, argv: argv) { data, size in fuzzProxyRules(data, size) }
}
