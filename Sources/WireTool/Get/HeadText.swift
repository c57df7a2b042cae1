import Wire

/// The text forms of message heads: raw for `-i`, prefixed for `-v`, and the timing lines of `-v`.
enum HeadText {
    /// The status line and fields of a response, one string per line, without line ends.
    static func lines(of head: HTTPResponseHead) -> [String] {
        let reason = head.reasonPhrase.isEmpty ? "" : " \(head.reasonPhrase)"
        return ["\(head.version) \(head.status.code)\(reason)"] + head.headers.map { "\($0.name): \($0.value)" }
    }

    /// A request head as written (CRLF-separated bytes), one string per line, without line ends
    /// or the empty line that ends it. Bytes that are not UTF-8 show as U+FFFD.
    static func lines(ofSent head: [UInt8]) -> [String] {
        var lines: [String] = []
        var start = 0
        for index in head.indices.dropLast() where head[index] == 13 && head[index + 1] == 10 {
            if index > start { lines.append(String(decoding: head[start..<index], as: UTF8.self)) }
            start = index + 2
        }
        if start < head.count { lines.append(String(decoding: head[start...], as: UTF8.self)) }
        return lines
    }

    /// The head as it came, for `-i`: CRLF line ends and the empty line that ends a head.
    static func raw(_ head: HTTPResponseHead) -> String {
        lines(of: head).map { $0 + "\r\n" }.joined() + "\r\n"
    }

    /// curl's `-v` form: each line behind `prefix` (`> ` sent, `< ` received), then a line with the bare prefix
    /// for the empty line that ends a head.
    static func verbose(_ lines: [String], prefix: String) -> String {
        lines.map { prefix + $0 + "\n" }.joined() + prefix + "\n"
    }

    /// A `* ` line saying which connection served the request, printed with the response head.
    static func verboseConnection(_ metrics: HTTPClientMetrics.Snapshot) -> String {
        let address = metrics.remoteAddress.map { "\($0)" } ?? "the server"
        let retried = metrics.retries > 0 ? " (after \(metrics.retries) retry on a fresh connection)" : ""
        let verb = metrics.isReusedConnection ? "re-used the connection to" : "connected to"
        return "* \(verb) \(address)\(retried)\n"
    }

    /// `* ` lines with the phase timings and redirects, printed once the body has ended.
    static func verboseTimings(_ metrics: HTTPClientMetrics.Snapshot) -> String {
        let timings = metrics.timings
        let phases: [(String, Duration?)] = [
            ("name_resolved", timings.nameResolved), ("connected", timings.connected),
            ("tls_connected", timings.secureConnected), ("request_sent", timings.requestSent),
            ("first_byte", timings.firstByte), ("last_byte", timings.lastByte),
        ]
        // Plain http has no TLS phase at all: leave it out rather than print a dash.
        let figures = phases.filter { $0.0 != "tls_connected" || $0.1 != nil }.map { name, value in
            "\(name)=" + (value.map { formatSeconds(JSONSummaryWriter.seconds($0)) } ?? "-")
        }
        var text = "* timings: " + figures.joined(separator: " ") + "\n"
        if metrics.redirects > 0 {
            text += "* followed \(metrics.redirects) redirect\(metrics.redirects == 1 ? "" : "s")\n"
        }
        return text
    }

    /// Seconds with microsecond precision, like curl's `-w` timings.
    private static func formatSeconds(_ seconds: Double) -> String {
        let micros = Int((seconds * 1_000_000).rounded())
        let fraction = String(micros % 1_000_000)
        return "\(micros / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)s"
    }
}
