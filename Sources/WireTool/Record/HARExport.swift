import Wire
import WireClient

/// A recording as an HTTP Archive (HAR 1.2, http://www.softwareishard.com/blog/har-12-spec/): one entry per request
/// found in the bytes, paired in order with the final response on the same connection.
///
/// Timings, in milliseconds, -1 where they do not apply: from a client recording's metrics, `blocked` is the wait for
/// a connection (`queued`); `dns`, `connect` and `ssl` are the new connection's phases (`connect` includes `ssl`, as
/// HAR 1.2 says), -1 on a reused one; `send` runs from the connection being ready to the request's last byte handed
/// to the kernel, `wait` from there to the response's first byte, `receive` to its last. A server recording (or a
/// request without metrics) knows no connection phases: `send`, `wait` and `receive` come from the recorded times of
/// the request's first and last bytes and the response's first and last. Bodies are as they were sent, without
/// their chunked framing (a `Content-Encoding` is not undone): UTF-8 text as `text`, anything else in base64 with
/// `encoding: "base64"` (for a request's `postData`, `_encoding`, HAR's mark of a custom field).
struct HARExport {
    private var entries: [JSONValue] = []

    /// Adds the entries of `recording`.
    mutating func add(_ recording: Recording) {
        for connection in recording.connections {
            let clientBytes = connection.bytes(of: .client)
            let serverBytes = connection.bytes(of: .server)
            let requests = MessageStream(clientBytes, kind: .request).messages.filter { $0.request != nil }
            let responses = MessageStream(
                serverBytes, kind: .response, methods: requests.compactMap { $0.request?.method }
            ).messages.filter { $0.response.map { !$0.isInterim } ?? false }
            for (index, request) in requests.enumerated() {
                let response = index < responses.count ? responses[index] : nil
                entries.append(
                    entry(
                        request, clientBytes: clientBytes, response: response, serverBytes: serverBytes,
                        connection: connection, recording: recording))
            }
        }
    }

    /// The archive.
    var document: JSONValue {
        .object([
            "log": .object([
                "version": .string("1.2"),
                "creator": .object(["name": .string("wire"), "version": .string(WireVersion.number)]),
                "pages": .array([]),
                "entries": .array(entries),
            ])
        ])
    }

    private func entry(
        _ request: MessageStream.Message, clientBytes: [UInt8], response: MessageStream.Message?, serverBytes: [UInt8],
        connection: Recording.Connection, recording: Recording
    ) -> JSONValue {
        let head = request.request!
        let firstOut = connection.time(ofByte: request.range.lowerBound, of: .client) ?? 0
        let lastOut =
            connection.time(ofByte: max(request.range.lowerBound, request.range.upperBound - 1), of: .client) ?? firstOut
        let firstIn = response.flatMap { connection.time(ofByte: $0.range.lowerBound, of: .server) }
        let lastIn = response.flatMap { connection.time(ofByte: max($0.range.lowerBound, $0.range.upperBound - 1), of: .server) }
        // The client side's exchange, when the recording names it: its metrics.
        let exchange = Self.exchange(atByte: request.range.lowerBound, in: connection)
        let metrics = exchange.flatMap { recording.metrics[$0] }
        var timings = Timings(bytesFrom: firstOut, lastOut: lastOut, firstIn: firstIn, lastIn: lastIn)
        if let phases = metrics?.timings { timings.apply(phases) }
        let started = recording.startedUnix + (metrics?.t ?? firstOut)
        var fields: [String: JSONValue] = [
            "startedDateTime": .string(Timestamp.rfc3339(started)),
            "time": .double(timings.total),
            "request": requestObject(request, url: metrics?.url ?? Self.url(of: head, recording: recording)),
            "response": response.map(responseObject) ?? Self.missingResponse,
            "cache": .object([:]),
            "timings": timings.object,
            "connection": .string(String(connection.number)),
        ]
        if let address = metrics?.remote {
            fields["serverIPAddress"] = .string(Self.host(of: address))
        }
        return .object(fields)
    }

    /// The `exchange` of the client event that carried byte `offset` of the client's bytes.
    private static func exchange(atByte offset: Int, in connection: Recording.Connection) -> Int? {
        var position = 0
        for event in connection.events where event.side == .client {
            position += event.bytes.count
            if offset < position { return event.exchange }
        }
        return nil
    }

    /// The request's URL from its target: absolute already, or the recording's scheme and the `Host` field.
    private static func url(of head: HTTPRequestHead, recording: Recording) -> String {
        if head.target.hasPrefix("http://") || head.target.hasPrefix("https://") { return head.target }
        let scheme = recording.url.hasPrefix("https:") ? "https" : "http"
        let authority =
            head.headers.first(name: "Host")
            ?? recording.url.dropFirst(scheme.count + 3).prefix { $0 != "/" }.description
        return "\(scheme)://\(authority)\(head.target == "*" ? "/" : head.target)"
    }

    /// `host:port` or `[v6]:port` without its port.
    private static func host(of address: String) -> String {
        if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
            return String(address[address.index(after: address.startIndex)..<close])
        }
        return String(address.prefix { $0 != ":" })
    }

    private func requestObject(_ message: MessageStream.Message, url: String) -> JSONValue {
        let head = message.request!
        var fields: [String: JSONValue] = [
            "method": .string(head.method.rawValue),
            "url": .string(url),
            "httpVersion": .string(head.version.description),
            "cookies": .array(Self.cookies(head.headers, field: "Cookie")),
            "headers": Self.headers(head.headers),
            "queryString": .array(Self.query(of: head.target)),
            "headersSize": .int(message.headLength),
            "bodySize": .int(message.range.count - message.headLength),
        ]
        if !message.body.isEmpty {
            var post: [String: JSONValue] = [
                "mimeType": .string(head.headers.first(name: "Content-Type") ?? ""),
                "params": .array([]),
            ]
            if let text = Self.text(message.body) {
                post["text"] = .string(text)
            } else {
                post["text"] = .string(Base64Encoder.encode(message.body))
                post["_encoding"] = .string("base64")
            }
            fields["postData"] = .object(post)
        }
        return .object(fields)
    }

    private func responseObject(_ message: MessageStream.Message) -> JSONValue {
        let head = message.response!
        var content: [String: JSONValue] = [
            "size": .int(message.body.count),
            "mimeType": .string(head.headers.first(name: "Content-Type") ?? ""),
        ]
        if !message.body.isEmpty {
            if let text = Self.text(message.body) {
                content["text"] = .string(text)
            } else {
                content["text"] = .string(Base64Encoder.encode(message.body))
                content["encoding"] = .string("base64")
            }
        }
        return .object([
            "status": .int(head.status.code),
            "statusText": .string(head.reasonPhrase),
            "httpVersion": .string(head.version.description),
            "cookies": .array(Self.cookies(head.headers, field: "Set-Cookie")),
            "headers": Self.headers(head.headers),
            "content": .object(content),
            "redirectURL": .string(head.headers.first(name: "Location") ?? ""),
            "headersSize": .int(message.headLength),
            "bodySize": .int(message.range.count - message.headLength),
        ])
    }

    /// What an entry without an answer (the connection ended first) carries: status 0, as browsers export it.
    private static let missingResponse: JSONValue = .object([
        "status": .int(0), "statusText": .string(""), "httpVersion": .string(""), "cookies": .array([]),
        "headers": .array([]), "content": .object(["size": .int(0), "mimeType": .string("")]),
        "redirectURL": .string(""), "headersSize": .int(-1), "bodySize": .int(-1),
    ])

    private static func headers(_ headers: HTTPHeaders) -> JSONValue {
        .array(headers.indices.map { .object(["name": .string(headers.name(at: $0)), "value": .string(headers.value(at: $0))]) })
    }

    /// `Cookie: a=1; b=2` as two cookies; each `Set-Cookie` as one (its attributes are not split out).
    private static func cookies(_ headers: HTTPHeaders, field: String) -> [JSONValue] {
        var cookies: [JSONValue] = []
        for position in headers.indices where headers.name(at: position).lowercased() == field.lowercased() {
            let value = headers.value(at: position)
            let pairs = field == "Cookie" ? value.split(separator: ";") : [value.split(separator: ";").first ?? ""]
            for pair in pairs {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard let name = parts.first.map(Self.trimmed), !name.isEmpty else { continue }
                cookies.append(.object(["name": .string(name), "value": .string(parts.count > 1 ? Self.trimmed(parts[1]) : "")]))
            }
        }
        return cookies
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    /// The query's `name=value` pairs, as they are in the target (not percent-decoded).
    private static func query(of target: String) -> [JSONValue] {
        guard let mark = target.firstIndex(of: "?") else { return [] }
        let query = target[target.index(after: mark)...].prefix { $0 != "#" }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return .object(["name": .string(String(parts[0])), "value": .string(parts.count > 1 ? String(parts[1]) : "")])
        }
    }

    /// The bytes as text when they are UTF-8 and hold no NUL.
    private static func text(_ bytes: [UInt8]) -> String? {
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else { return nil }
        return text
    }

    /// HAR's timings of one entry, in milliseconds.
    struct Timings {
        var blocked = -1.0
        var dns = -1.0
        var connect = -1.0
        var ssl = -1.0
        var send: Double
        var wait: Double
        var receive: Double

        /// From the recorded times of the bytes (seconds since the recording's start).
        init(bytesFrom firstOut: Double, lastOut: Double, firstIn: Double?, lastIn: Double?) {
            send = Self.milliseconds(lastOut - firstOut)
            wait = firstIn.map { Self.milliseconds($0 - lastOut) } ?? -1
            receive = firstIn.flatMap { first in lastIn.map { Self.milliseconds($0 - first) } } ?? -1
        }

        /// From the client's metrics (see `RecordLine`: connection phases count from when the connection began
        /// opening, `queued` after the request's start).
        mutating func apply(_ phases: RecordLine.Timings) {
            // A server's metrics have no client phases (see `init(bytesFrom:…)`).
            guard let queued = phases.queued else { return }
            blocked = Self.milliseconds(queued)
            var ready = queued
            if let connected = phases.connected {
                let resolved = phases.nameResolved ?? 0
                if phases.nameResolved != nil { dns = Self.milliseconds(resolved) }
                let established = phases.secureConnected ?? connected
                connect = Self.milliseconds(established - resolved)
                if let secure = phases.secureConnected { ssl = Self.milliseconds(secure - connected) }
                ready += established
            }
            if let sent = phases.requestSent {
                send = Self.milliseconds(sent - ready)
                if let first = phases.firstByte { wait = Self.milliseconds(first - sent) }
            }
            if let first = phases.firstByte, let last = phases.lastByte { receive = Self.milliseconds(last - first) }
        }

        /// The entry's `time`: every phase that applies (`ssl` is inside `connect`).
        var total: Double {
            Self.round([blocked, dns, connect, send, wait, receive].filter { $0 > 0 }.reduce(0, +))
        }

        var object: JSONValue {
            .object([
                "blocked": Self.value(blocked), "dns": Self.value(dns), "connect": Self.value(connect),
                "ssl": Self.value(ssl), "send": Self.value(send), "wait": Self.value(wait),
                "receive": Self.value(receive),
            ])
        }

        private static func value(_ milliseconds: Double) -> JSONValue {
            milliseconds < 0 ? .int(-1) : .double(milliseconds)
        }

        /// Seconds as milliseconds to the microsecond, never negative (clocks read a few microseconds apart).
        private static func milliseconds(_ seconds: Double) -> Double {
            round(max(0, seconds * 1000))
        }

        private static func round(_ milliseconds: Double) -> Double {
            (milliseconds * 1000).rounded() / 1000
        }
    }
}
