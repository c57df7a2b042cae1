import Histogram
import Wire
import WireClient
import WireLoad

/// The figures of one `wire bench` run, in the units they are reported in, for the text report
/// and the JSON summary.
struct BenchSummary {
    /// What was measured: the URL, or the embedded server's.
    var url: String
    var isEmbeddedServer: Bool
    var connections: Int
    var loops: Int
    var pipeline: Int
    /// Requests per second asked for (constant-rate mode), or nil (closed loop).
    var rate: Double?
    var duration: Duration
    var statistics: LoadStatistics
    var latency: Histogram<UInt64>
    var processCPU: CPUTime
    var loopCPU: CPUTime
    /// The part of a run in parts this process sent (`--segment`); `connections` and `rate` are its share.
    var segment: LoadSegment?
    /// The requests of a `--requests-file` mix (0: one request).
    var mixSize = 0

    var seconds: Double { duration.secondsValue }
    var requests: Int { statistics.responses }
    var requestsPerSecond: Double { seconds > 0 ? Double(requests) / seconds : 0 }
    var bytesPerSecond: Double { seconds > 0 ? Double(statistics.bytesRead) / seconds : 0 }

    /// The CPU time the measurement is charged with: the whole process against a URL (it is all
    /// client), only the load generator's loops when an embedded server shares the process.
    var clientCPU: CPUTime { isEmbeddedServer ? loopCPU : processCPU }

    /// Client CPU microseconds per request, user plus system.
    var cpuMicrosecondsPerRequest: Double {
        requests > 0 ? clientCPU.total.secondsValue * 1e6 / Double(requests) : 0
    }

    /// The percentiles reported, in percent.
    static let percentiles: [(label: String, key: String, value: Double)] = [
        ("50%", "p50", 50), ("75%", "p75", 75), ("90%", "p90", 90), ("99%", "p99", 99), ("99.9%", "p99_9", 99.9),
    ]

    /// A latency from the histogram (nanoseconds) in milliseconds.
    func milliseconds(atPercentile percentile: Double) -> Double {
        Double(latency.valueAtPercentile(percentile)) / 1e6
    }

    // MARK: Text

    /// The report a person reads.
    var text: String {
        var lines: [String] = []
        let mode = rate.map { "constant rate \(Self.count($0)) requests/s" } ?? "closed loop"
        lines.append("wire bench \(url)\(isEmbeddedServer ? " (embedded wire serve --hello)" : "")")
        lines.append(
            "  \(connections) connection\(connections == 1 ? "" : "s") on \(loops) loop\(loops == 1 ? "" : "s"), "
                + "\(mode), pipeline \(pipeline), \(DecimalText.fixed(seconds, decimals: 2)) s")
        if let segment { lines.append("  segment \(segment): this process's share of the run's connections and rate") }
        if mixSize > 0 { lines.append("  a mix of \(mixSize) requests (--requests-file)") }
        lines.append("")
        lines.append("  requests      \(Self.count(Double(requests)))  (\(Self.count(requestsPerSecond)) requests/s)")
        lines.append("  transfer      \(Self.bytes(Double(statistics.bytesRead)))  (\(Self.bytes(bytesPerSecond))/s)")
        if latency.totalCount > 0 {
            let columns = Self.percentiles.map { "\($0.label) \(Self.ms(milliseconds(atPercentile: $0.value)))" }
            lines.append("  latency       " + columns.joined(separator: "  ") + "  max \(Self.ms(Double(latency.max) / 1e6))")
            lines.append(
                "                mean \(Self.ms(latency.mean / 1e6))  stdev \(Self.ms(latency.stdDeviation / 1e6))"
                    + (rate != nil ? "  (from each request's scheduled send time)" : ""))
        }
        let cpuLabel = isEmbeddedServer ? "client CPU    " : "CPU           "
        lines.append(
            "  \(cpuLabel)\(DecimalText.fixed(cpuMicrosecondsPerRequest, decimals: 2)) µs/request"
                + "  (user \(DecimalText.fixed(clientCPU.user.secondsValue, decimals: 2)) s, system \(DecimalText.fixed(clientCPU.system.secondsValue, decimals: 2)) s"
                + (isEmbeddedServer
                    ? "; whole process with the server \(DecimalText.fixed(processCPU.total.secondsValue * 1e6 / Double(max(requests, 1)), decimals: 2)) µs/request)"
                    : ")"))
        if statistics.resentRequests > 0 {
            lines.append(
                "  resent        \(statistics.resentRequests) requests the server closed the connection on before "
                    + "answering (Connection: close, or a kept-alive connection closed)")
        }
        if statistics.errorCount == 0 {
            lines.append("  errors        none")
        } else {
            lines.append("  errors        \(statistics.errorCount)")
            for kind in LoadErrorKind.allCases {
                guard let count = statistics.errors[kind], count > 0 else { continue }
                var line = "    \(kind.rawValue.padded(to: 8)) \(count)"
                if kind == .status {
                    line +=
                        "  ("
                        + statistics.unexpectedStatuses.sorted { $0.key < $1.key }
                        .map { "\($0.value) × \($0.key)" }.joined(separator: ", ") + ")"
                }
                lines.append(line)
                for (reason, times) in (statistics.reasons[kind] ?? [:]).sorted(by: { $0.value > $1.value }) {
                    lines.append("             \(times) × \(reason)")
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: JSON

    /// The machine-readable summary (keys in snake_case, latencies in milliseconds).
    var json: String { jsonObject.text + "\n" }

    /// The latency figures of a histogram (nanoseconds) in milliseconds, as the JSON summary has them.
    static func latencyObject(_ latency: Histogram<UInt64>) -> JSONValue {
        var object: [String: JSONValue] = [
            "max": .double(Double(latency.max) / 1e6), "mean": .double(latency.mean / 1e6),
            "stdev": .double(latency.stdDeviation / 1e6), "count": .int(Int(latency.totalCount)),
        ]
        for percentile in percentiles {
            object[percentile.key] = .double(Double(latency.valueAtPercentile(percentile.value)) / 1e6)
        }
        return .object(object)
    }

    /// The JSON summary as a value.
    var jsonObject: JSONValue {
        var errors: [String: JSONValue] = ["total": .int(statistics.errorCount)]
        for kind in LoadErrorKind.allCases { errors[kind.rawValue] = .int(statistics.errors[kind] ?? 0) }
        var reasons: [String: JSONValue] = [:]
        for (kind, table) in statistics.reasons { reasons[kind.rawValue] = .object(table.mapValues { .int($0) }) }
        errors["reasons"] = .object(reasons)
        errors["statuses"] = .object(
            Dictionary(
                uniqueKeysWithValues: statistics.unexpectedStatuses.map {
                    (String($0.key), JSONValue.int($0.value))
                }))
        var object: [String: JSONValue] = [
            "url": .string(url),
            "embedded_server": .bool(isEmbeddedServer),
            "connections": .int(connections),
            "loops": .int(loops),
            "pipeline": .int(pipeline),
            "rate": rate.map { .double($0) } ?? .null,
            "duration_seconds": .double(seconds),
            "requests": .int(requests),
            "requests_per_second": .double(requestsPerSecond),
            "bytes": .int(statistics.bytesRead),
            "bytes_per_second": .double(bytesPerSecond),
            "latency_ms": Self.latencyObject(latency),
            "errors": .object(errors),
            "cpu_us_per_request": .double(cpuMicrosecondsPerRequest),
            "requests_resent": .int(statistics.resentRequests),
            "cpu_user_seconds": .double(clientCPU.user.secondsValue),
            "cpu_system_seconds": .double(clientCPU.system.secondsValue),
            "process_cpu_seconds": .double(processCPU.total.secondsValue),
        ]
        if let segment { object["segment"] = .string(segment.description) }
        if mixSize > 0 { object["mix_requests"] = .int(mixSize) }
        return .object(object)
    }

    // MARK: hgrm

    /// The standard HdrHistogram percentile distribution (as wrk2 prints it), values in milliseconds.
    var percentileDistribution: String {
        var text = ""
        latency.outputPercentileDistribution(to: &text, outputValueUnitScalingRatio: 1e6)
        return text
    }

    // MARK: Formatting

    static func count(_ value: Double) -> String {
        let rounded = value >= 100 ? value.rounded() : (value * 10).rounded() / 10
        if rounded != rounded.rounded() { return DecimalText.fixed(rounded, decimals: 1) }
        var digits = String(Int(rounded))
        var grouped = ""
        while digits.count > 3 {
            grouped = "," + digits.suffix(3) + grouped
            digits.removeLast(3)
        }
        return digits + grouped
    }

    static func bytes(_ value: Double) -> String {
        if value >= 1e9 { return DecimalText.fixed(value / 1e9, decimals: 2) + " GB" }
        if value >= 1e6 { return DecimalText.fixed(value / 1e6, decimals: 2) + " MB" }
        if value >= 1e3 { return DecimalText.fixed(value / 1e3, decimals: 2) + " kB" }
        return "\(Int(value)) B"
    }

    static func ms(_ value: Double) -> String {
        DecimalText.fixed(value, decimals: value >= 100 ? 0 : value >= 1 ? 2 : 3) + " ms"
    }
}

extension Duration {
    /// The duration in seconds.
    var secondsValue: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
