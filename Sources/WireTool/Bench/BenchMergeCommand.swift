import ArgumentParser
import FoundationEssentials
import Histogram
import Wire
import WireClient
import WireLoad

/// `wire bench merge`: the interval logs of a run's parts reported as one run, as if one process had
/// measured everything: histograms added, counts summed, rates over the union of the parts' time.
struct BenchMergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Report the interval logs of the parts of a run (--segment) as one run.",
        discussion: """
            Each LOG is a --json-intervals file (requests, bytes, errors by kind and latencies) or an --hlog file, \
            or any HdrHistogram interval log (latencies only: its requests are its histograms' counts). The \
            latency histograms of every interval are added, the counts summed, and the rates taken over the time \
            from the first interval's start to the last one's end.
            """
    )

    @Argument(help: "The interval logs of the parts.")
    var logs: [String]

    @Flag(help: "Print a JSON summary on standard output instead of the report.")
    var json = false

    @Option(help: "Write the merged percentile distribution (wrk2's format, milliseconds) to this file.")
    var hgrm: String?

    func validate() throws {
        guard !logs.isEmpty else { throw ValidationError("give the interval logs to merge") }
    }

    func run() throws {
        var merge = BenchMerge()
        for path in logs {
            let text: String
            do {
                text = String(decoding: try LocalFiles.contents(atPath: path), as: UTF8.self)
            } catch {
                StandardStreams.error("wire bench merge: cannot read \(path): \(error)\n")
                throw ExitCode(1)
            }
            do {
                try merge.add(log: text)
            } catch {
                StandardStreams.error("wire bench merge: \(path): \(error)\n")
                throw ExitCode(1)
            }
        }
        if let warning = merge.segmentWarning { StandardStreams.error("wire bench merge: \(warning)\n") }
        StandardStreams.output(json ? merge.jsonObject.text + "\n" : merge.text)
        if let hgrm {
            var text = ""
            merge.latency.outputPercentileDistribution(to: &text, outputValueUnitScalingRatio: 1e6)
            do {
                try LocalFiles.write(Array(text.utf8), toPath: hgrm)
            } catch {
                StandardStreams.error("wire bench merge: cannot write \(hgrm): \(error)\n")
                throw ExitCode(1)
            }
        }
    }
}

/// The sum of interval logs: what `wire bench merge` reports.
package struct BenchMerge {
    /// A log that cannot be merged.
    package struct MergeError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Every interval's latencies (nanoseconds).
    package private(set) var latency: Histogram<UInt64> = {
        var histogram = LatencyHistogram.makeHistogram()
        histogram.autoResize = true
        return histogram
    }()
    /// Requests answered, bytes read, errors by kind and unexpected statuses, summed.
    package private(set) var requests = 0
    package private(set) var bytes = 0
    /// Whether any log carried byte counts (JSON intervals; HdrHistogram logs do not).
    package private(set) var hasBytes = false
    package private(set) var errors: [String: Int] = [:]
    package private(set) var statuses: [String: Int] = [:]
    /// The union of the intervals' time, in seconds since the epoch.
    package private(set) var start = Double.infinity
    package private(set) var end = -Double.infinity
    /// The logs merged, and the parts their run lines name (`1/4`).
    package private(set) var logCount = 0
    package private(set) var segments: [String] = []
    /// The run the parts belong to, from the first run line: URL, connections and rate of the whole run.
    package private(set) var url: String?
    package private(set) var connections: Int?
    package private(set) var rate: Double?

    package init() {}

    /// The merged time in seconds.
    package var seconds: Double { end > start ? end - start : 0 }
    package var requestsPerSecond: Double { seconds > 0 ? Double(requests) / seconds : 0 }
    package var errorCount: Int { errors.values.reduce(0, +) }

    /// Adds a log: JSON intervals when its first line is an object, an HdrHistogram log otherwise.
    package mutating func add(log text: String) throws(MergeError) {
        logCount += 1
        let firstLine = text.split(separator: "\n").first { !$0.allSatisfy(\.isWhitespace) } ?? ""
        if firstLine.hasPrefix("{") {
            try addJSON(text)
            return
        }
        let intervals: [HistogramLog.Interval]
        do {
            intervals = try HistogramLog.read(text)
        } catch {
            throw MergeError(description: error.description)
        }
        for interval in intervals {
            addInterval(start: interval.start, end: interval.start + interval.length, histogram: interval.histogram)
            requests += Int(interval.histogram.totalCount)
        }
    }

    private mutating func addJSON(_ text: String) throws(MergeError) {
        let decoder = JSONDecoder()
        for (number, line) in text.split(separator: "\n").enumerated() where !line.allSatisfy(\.isWhitespace) {
            let value: JSONValue
            do {
                value = try decoder.decode(JSONValue.self, from: Data(line.utf8))
            } catch {
                throw MergeError(description: "line \(number + 1): not JSON")
            }
            switch value["type"] {
            case "run":
                if case .string(let segment)? = value["segment"] { segments.append(segment) }
                if url == nil, case .string(let text)? = value["url"] { url = text }
                if connections == nil { connections = Self.number(value["connections"]).map { Int($0) } }
                if rate == nil { rate = Self.number(value["rate"]) }
            case "interval":
                guard let start = Self.number(value["start"]), let end = Self.number(value["end"]),
                    case .string(let encoded)? = value["histogram"]
                else { throw MergeError(description: "line \(number + 1): an interval without start, end or histogram") }
                let histogram: Histogram<UInt64>
                do {
                    histogram = try HistogramCoding.decode(base64: encoded)
                } catch {
                    throw MergeError(description: "line \(number + 1): \(error)")
                }
                addInterval(start: start, end: end, histogram: histogram)
                requests += Self.number(value["requests"]).map { Int($0) } ?? Int(histogram.totalCount)
                if let count = Self.number(value["bytes"]) {
                    bytes += Int(count)
                    hasBytes = true
                }
                if case .object(let kinds)? = value["errors"] {
                    for (kind, count) in kinds where kind != "total" {
                        errors[kind, default: 0] += Self.number(count).map { Int($0) } ?? 0
                    }
                }
                if case .object(let codes)? = value["statuses"] {
                    for (code, count) in codes { statuses[code, default: 0] += Self.number(count).map { Int($0) } ?? 0 }
                }
            default:
                continue
            }
        }
    }

    private mutating func addInterval(start: Double, end: Double, histogram: Histogram<UInt64>) {
        self.start = min(self.start, start)
        self.end = max(self.end, end)
        if histogram.lowestDiscernibleValue == latency.lowestDiscernibleValue
            && histogram.numberOfSignificantValueDigits == latency.numberOfSignificantValueDigits
        {
            latency.add(histogram)
        } else {
            // Another layout (a log of another tool): each bucket again, at its highest equivalent value.
            for bucket in histogram.recordedValues() { latency.record(bucket.value, count: bucket.count) }
        }
    }

    private static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .int(let number)?: Double(number)
        case .double(let number)?: number
        default: nil
        }
    }

    /// A note when the parts named are not one complete run (a part missing or given twice).
    package var segmentWarning: String? {
        guard !segments.isEmpty else { return nil }
        let counts = Set(segments.compactMap { LoadSegment(parsing: $0)?.count })
        guard counts.count == 1, let count = counts.first else {
            return "the logs are parts of runs split differently (\(segments.joined(separator: ", ")))"
        }
        let given = segments.compactMap { LoadSegment(parsing: $0)?.index }
        let missing = (0..<count).filter { !given.contains($0) }.map { "\($0 + 1)/\(count)" }
        let twice = Set(given.filter { part in given.filter { $0 == part }.count > 1 }).sorted().map { "\($0 + 1)/\(count)" }
        var problems: [String] = []
        if !missing.isEmpty { problems.append("missing \(missing.joined(separator: ", "))") }
        if !twice.isEmpty { problems.append("given twice \(twice.joined(separator: ", "))") }
        return problems.isEmpty ? nil : "the parts are not one whole run: " + problems.joined(separator: "; ")
    }

    // MARK: Report

    /// The report a person reads, in `wire bench`'s layout.
    package var text: String {
        var lines: [String] = []
        var about = "wire bench merge: \(logCount) log\(logCount == 1 ? "" : "s")"
        if let url { about += " of \(url)" }
        lines.append(about)
        var run: [String] = []
        if let connections { run.append("\(connections) connections") }
        if let rate { run.append("constant rate \(BenchSummary.count(rate)) requests/s") }
        if !segments.isEmpty { run.append("segments \(segments.joined(separator: ", "))") }
        run.append("\(DecimalText.fixed(seconds, decimals: 2)) s from the first interval's start to the last one's end")
        lines.append("  " + run.joined(separator: ", "))
        lines.append("")
        lines.append(
            "  requests      \(BenchSummary.count(Double(requests)))  (\(BenchSummary.count(requestsPerSecond)) requests/s)")
        if hasBytes {
            lines.append(
                "  transfer      \(BenchSummary.bytes(Double(bytes)))  (\(BenchSummary.bytes(seconds > 0 ? Double(bytes) / seconds : 0))/s)"
            )
        }
        if latency.totalCount > 0 {
            let columns = BenchSummary.percentiles.map {
                "\($0.label) \(BenchSummary.ms(Double(latency.valueAtPercentile($0.value)) / 1e6))"
            }
            lines.append(
                "  latency       " + columns.joined(separator: "  ") + "  max \(BenchSummary.ms(Double(latency.max) / 1e6))")
            lines.append(
                "                mean \(BenchSummary.ms(latency.mean / 1e6))  stdev \(BenchSummary.ms(latency.stdDeviation / 1e6))"
            )
        }
        if errorCount == 0 {
            lines.append("  errors        none")
        } else {
            lines.append("  errors        \(errorCount)")
            for (kind, count) in errors.sorted(by: { $0.key < $1.key }) where count > 0 {
                var line = "    \(kind.padded(to: 8)) \(count)"
                if kind == LoadErrorKind.status.rawValue, !statuses.isEmpty {
                    line +=
                        "  (" + statuses.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")
                        + ")"
                }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The machine-readable report (`--json`).
    package var jsonObject: JSONValue {
        var errorObject: [String: JSONValue] = ["total": .int(errorCount)]
        for (kind, count) in errors { errorObject[kind] = .int(count) }
        return .object([
            "logs": .int(logCount),
            "url": url.map { .string($0) } ?? .null,
            "connections": connections.map { .int($0) } ?? .null,
            "rate": rate.map { .double($0) } ?? .null,
            "segments": .array(segments.map { .string($0) }),
            "start": .double(start.isFinite ? start : 0),
            "end": .double(end.isFinite ? end : 0),
            "duration_seconds": .double(seconds),
            "requests": .int(requests),
            "requests_per_second": .double(requestsPerSecond),
            "bytes": hasBytes ? .int(bytes) : .null,
            "latency_ms": BenchSummary.latencyObject(latency),
            "errors": .object(errorObject),
            "statuses": .object(statuses.mapValues { .int($0) }),
        ])
    }
}
