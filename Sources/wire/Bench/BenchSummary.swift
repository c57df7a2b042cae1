import Foundation
import Histogram
import Wire

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
        lines.append("  \(connections) connection\(connections == 1 ? "" : "s") on \(loops) loop\(loops == 1 ? "" : "s"), "
            + "\(mode), pipeline \(pipeline), \(String(format: "%.2f", seconds)) s")
        lines.append("")
        lines.append("  requests      \(Self.count(Double(requests)))  (\(Self.count(requestsPerSecond)) requests/s)")
        lines.append("  transfer      \(Self.bytes(Double(statistics.bytesRead)))  (\(Self.bytes(bytesPerSecond))/s)")
        if latency.totalCount > 0 {
            let columns = Self.percentiles.map { "\($0.label) \(Self.ms(milliseconds(atPercentile: $0.value)))" }
            lines.append("  latency       " + columns.joined(separator: "  ") + "  max \(Self.ms(Double(latency.max) / 1e6))")
            lines.append("                mean \(Self.ms(latency.mean / 1e6))  stdev \(Self.ms(latency.stdDeviation / 1e6))"
                + (rate != nil ? "  (from each request's scheduled send time)" : ""))
        }
        let cpuLabel = isEmbeddedServer ? "client CPU    " : "CPU           "
        lines.append("  \(cpuLabel)\(String(format: "%.2f", cpuMicrosecondsPerRequest)) µs/request"
            + "  (user \(String(format: "%.2f", clientCPU.user.secondsValue)) s, system \(String(format: "%.2f", clientCPU.system.secondsValue)) s"
            + (isEmbeddedServer ? "; whole process with the server \(String(format: "%.2f", processCPU.total.secondsValue * 1e6 / Double(max(requests, 1)))) µs/request)" : ")"))
        if statistics.resentRequests > 0 {
            lines.append("  resent        \(statistics.resentRequests) pipelined requests the server closed the connection on "
                + "(Connection: close) before answering")
        }
        if statistics.errorCount == 0 {
            lines.append("  errors        none")
        } else {
            lines.append("  errors        \(statistics.errorCount)")
            for kind in LoadErrorKind.allCases {
                guard let count = statistics.errors[kind], count > 0 else { continue }
                var line = "    \(kind.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) \(count)"
                if kind == .status {
                    line += "  (" + statistics.unexpectedStatuses.sorted { $0.key < $1.key }
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
    var json: String {
        var latencyObject: [String: Any] = [
            "max": Double(latency.max) / 1e6, "mean": latency.mean / 1e6, "stdev": latency.stdDeviation / 1e6,
            "count": Int(latency.totalCount),
        ]
        for percentile in Self.percentiles { latencyObject[percentile.key] = milliseconds(atPercentile: percentile.value) }
        var errors: [String: Any] = ["total": statistics.errorCount]
        for kind in LoadErrorKind.allCases { errors[kind.rawValue] = statistics.errors[kind] ?? 0 }
        var reasons: [String: Any] = [:]
        for (kind, table) in statistics.reasons { reasons[kind.rawValue] = table }
        errors["reasons"] = reasons
        errors["statuses"] = Dictionary(uniqueKeysWithValues: statistics.unexpectedStatuses.map { (String($0.key), $0.value) })
        var object: [String: Any] = [
            "url": url,
            "embedded_server": isEmbeddedServer,
            "connections": connections,
            "loops": loops,
            "pipeline": pipeline,
            "duration_seconds": seconds,
            "requests": requests,
            "requests_per_second": requestsPerSecond,
            "bytes": statistics.bytesRead,
            "bytes_per_second": bytesPerSecond,
            "latency_ms": latencyObject,
            "errors": errors,
            "cpu_us_per_request": cpuMicrosecondsPerRequest,
            "requests_resent": statistics.resentRequests,
            "cpu_user_seconds": clientCPU.user.secondsValue,
            "cpu_system_seconds": clientCPU.system.secondsValue,
            "process_cpu_seconds": processCPU.total.secondsValue,
        ]
        object["rate"] = rate ?? NSNull()
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
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
        if rounded != rounded.rounded() { return String(format: "%.1f", rounded) }
        var digits = String(Int(rounded))
        var grouped = ""
        while digits.count > 3 {
            grouped = "," + digits.suffix(3) + grouped
            digits.removeLast(3)
        }
        return digits + grouped
    }

    static func bytes(_ value: Double) -> String {
        if value >= 1e9 { return String(format: "%.2f GB", value / 1e9) }
        if value >= 1e6 { return String(format: "%.2f MB", value / 1e6) }
        if value >= 1e3 { return String(format: "%.2f kB", value / 1e3) }
        return "\(Int(value)) B"
    }

    static func ms(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f ms", value) : value >= 1 ? String(format: "%.2f ms", value) : String(format: "%.3f ms", value)
    }
}

extension Duration {
    /// The duration in seconds.
    var secondsValue: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
