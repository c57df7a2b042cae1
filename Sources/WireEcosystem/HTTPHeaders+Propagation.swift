import Instrumentation
import Wire

/// Reads trace context (W3C `traceparent` and `tracestate`, or whatever the bootstrapped instrument uses) from a
/// request's fields.
struct HTTPHeadersExtractor: Extractor {
    func extract(key: String, from carrier: HTTPHeaders) -> String? {
        carrier.first(name: key)
    }
}

/// Writes trace context into a request's fields, replacing any value of the same name (a retried or redirected
/// request carries the context of its own span, never two).
struct HTTPHeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HTTPHeaders) {
        carrier.replaceOrAdd(name: key, value: value)
    }
}
