import Wire

/// The `Cache-Control` directives a private client cache acts on (RFC 9111 §5.2), read from every field of that name.
/// Unknown directives are ignored; a malformed delta-seconds value reads as 0 (stale), as RFC 9111 §1.2.2 advises.
struct CacheControl: Sendable, Hashable {
    var noStore = false
    var noCache = false
    var isPublic = false
    var isPrivate = false
    var mustRevalidate = false
    var maxAge: Int?
    var sMaxAge: Int?

    init(_ headers: HTTPHeaders) {
        for field in headers["Cache-Control"] {
            for item in field.split(separator: ",") {
                let directive = item.trimmingOWS
                guard !directive.isEmpty else { continue }
                let name: String
                var argument: Substring?
                if let equals = directive.firstIndex(of: "=") {
                    name = directive[..<equals].trimmingOWS.lowercased()
                    var value = directive[directive.index(after: equals)...].trimmingOWS[...]
                    if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
                    argument = value
                } else {
                    name = directive.lowercased()
                }
                switch name {
                case "no-store": noStore = true
                case "no-cache": noCache = true
                case "public": isPublic = true
                case "private": isPrivate = true
                case "must-revalidate": mustRevalidate = true
                case "max-age": maxAge = Self.deltaSeconds(argument)
                case "s-maxage": sMaxAge = Self.deltaSeconds(argument)
                default: break
                }
            }
        }
        // HTTP/1.0's `Pragma: no-cache` counts only where no `Cache-Control` says otherwise (RFC 9111 §5.4).
        if !headers.contains(name: "Cache-Control"), headers.containsToken("no-cache", inFieldsNamed: "Pragma") {
            noCache = true
        }
    }

    /// Digits only; a value too large for `Int` is as good as infinite (RFC 9111 §1.2.2 caps at 2^31).
    private static func deltaSeconds(_ text: Substring?) -> Int {
        guard let text, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return 0 }
        return Int(text.prefix(10)).map { min($0, Int(Int32.max)) } ?? 0
    }
}
