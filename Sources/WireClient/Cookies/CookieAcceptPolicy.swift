/// Which cookies a storage or session accepts (HTTPCookie.AcceptPolicy).
public enum CookieAcceptPolicy: String, Sendable, Hashable, Codable {
    /// Every cookie the RFC 6265 rules allow.
    case always
    /// None: responses' `Set-Cookie` fields are ignored (cookies already stored are still sent).
    case never
    /// Apple's "only from the main document's domain". A client has no documents, so every request is its own main
    /// document: this accepts what `.always` accepts.
    case onlyFromMainDocumentDomain
}
