import Synchronization
@_spi(Locking) import Wire

/// The fields a session sends with every request over the request's own: each of `httpAdditionalHeaders` the
/// request lacks, then `Accept-Encoding` when the session decodes content and the request has none.
///
/// Adding to a request's fields copies them (they are shared with whoever made the request). Requests built by one
/// serializer share one set of fields, so the last result is remembered: the same fields again (equal, and then
/// usually the very same storage, which compares at once) take it without a copy.
final class SessionFields: Sendable {
    private let configuration: SessionConfiguration
    private let last = Lock<(own: HTTPHeaders, sent: HTTPHeaders)?>(nil)

    init(configuration: SessionConfiguration) {
        self.configuration = configuration
    }

    /// `own` with the session's fields added.
    func fields(over own: HTTPHeaders) -> HTTPHeaders {
        if let sent = last.withLock({ last in last.flatMap { $0.own == own ? $0.sent : nil } }) { return sent }
        var sent = own
        for field in configuration.httpAdditionalHeaders where !sent.contains(name: field.name) {
            sent.add(name: field.name, value: field.value)
        }
        configuration.offerContentCodings(in: &sent)
        let result = sent
        last.withLock { $0 = (own, result) }
        return result
    }
}
