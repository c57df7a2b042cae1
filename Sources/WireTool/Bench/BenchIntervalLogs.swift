import FoundationEssentials
import Glibc
import Histogram
import Wire
import WireClient
import WireLoad

/// The monotonic clock against the wall clock, read together once: the run's schedule lives on the
/// first, logs and the common start of a segmented run on the second.
struct BenchClock {
    /// Seconds since the epoch when the monotonic clock read zero.
    let wallAtMonotonicZero: Double

    init() {
        let monotonic = Posix.monotonicNanoseconds()
        wallAtMonotonicZero = Date().timeIntervalSince1970 - Double(monotonic) / 1e9
    }

    /// The wall-clock time of a monotonic instant, in seconds since the epoch.
    func wallSeconds(_ monotonic: UInt64) -> Double { wallAtMonotonicZero + Double(monotonic) / 1e9 }

    /// The monotonic instant of a wall-clock time, or nil when it has passed.
    func monotonic(atWallSeconds seconds: Double) -> UInt64? {
        let nanoseconds = (seconds - wallAtMonotonicZero) * 1e9
        guard nanoseconds.isFinite, nanoseconds < 9e18, nanoseconds >= Double(Posix.monotonicNanoseconds()) else { return nil }
        return UInt64(nanoseconds)
    }
}

/// A file written line by line while the run goes on (an interval log); its descriptor is closed once.
final class BenchLogFile {
    let path: String
    private var descriptor: CInt

    /// Creates or truncates the file.
    init(path: String) throws(BenchLogError) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw BenchLogError(path: path, errno: errno) }
    }

    func write(_ text: String) throws(BenchLogError) {
        guard descriptor >= 0 else { return }
        do {
            try LocalFiles.writeAll(Array(text.utf8), to: descriptor)
        } catch {
            throw BenchLogError(description: "cannot write \(path): \(error)")
        }
    }

    func close() throws(BenchLogError) {
        guard descriptor >= 0 else { return }
        let result = Glibc.close(descriptor)
        descriptor = -1
        // close(2) may report a deferred write error; the descriptor is gone whatever it says.
        if result != 0 { throw BenchLogError(path: path, errno: errno) }
    }

    deinit { try? close() }
}

/// `--hlog` and `--json-intervals`: each interval of the run as it ends, as an HdrHistogram log line
/// and as a JSON line; the JSON file starts with a line about the run and ends with its summary.
///
/// JSON lines (keys sorted, times in seconds since the epoch, latencies in milliseconds):
/// `{"type":"run","url":…,"segment":"1/4","connections":64,"rate":4000.0,…}`, then per interval
/// `{"type":"interval","start":…,"end":…,"requests":…,"bytes":…,"errors":{"total":…,"timeout":…},
/// "statuses":{"503":…},"latency_ms":{"p50":…,…,"max":…},"histogram":"HISTFAAA…"}` (the interval's
/// compressed histogram, as in the HdrHistogram log), and last `{"type":"summary",…}` with the
/// fields of `wire bench --json`.
final class BenchIntervalLogs {
    /// What the logs say about the run they belong to (the whole run's -c and -R, and the part).
    struct Run {
        var url: String
        var segment: LoadSegment
        var connections: Int
        var loops: Int
        var pipeline: Int
        var rate: Double?
        var isEmbeddedServer: Bool
    }

    private let hlog: BenchLogFile?
    private let json: BenchLogFile?
    private let clock: BenchClock
    private let run: Run
    /// The first interval's start (the log's start and base time), once known.
    private var startTime: Double?
    /// The first write that failed; reported when the run ends.
    private var failure: BenchLogError?

    /// Opens the files; nil when neither is asked for.
    init?(hlogPath: String?, jsonPath: String?, clock: BenchClock, run: Run) throws(BenchLogError) {
        guard hlogPath != nil || jsonPath != nil else { return nil }
        self.clock = clock
        self.run = run
        hlog = try hlogPath.map { path throws(BenchLogError) in try BenchLogFile(path: path) }
        json = try jsonPath.map { path throws(BenchLogError) in try BenchLogFile(path: path) }
        var first: [String: JSONValue] = [
            "type": "run", "url": .string(run.url), "segment": .string(run.segment.description),
            "connections": .int(run.connections), "segment_connections": .int(run.segment.share(of: run.connections)),
            "loops": .int(run.loops), "pipeline": .int(run.pipeline), "embedded_server": .bool(run.isEmbeddedServer),
            "rate": run.rate.map { .double($0) } ?? .null,
            "segment_rate": run.rate.map { .double($0 / Double(run.segment.count)) } ?? .null,
        ]
        first["version"] = 1
        write(JSONValue.object(first).line, to: json)
    }

    /// Writes one interval.
    func record(_ interval: LoadInterval<Histogram<UInt64>>) {
        let histogram = LatencyHistogram.merged(interval.latencies)
        let start = clock.wallSeconds(interval.start)
        let end = clock.wallSeconds(interval.end)
        if startTime == nil { begin(at: start) }
        let base = startTime ?? start
        write(HistogramLog.line(start: start - base, length: end - start, histogram: histogram), to: hlog)

        let statistics = interval.statistics
        var errors: [String: JSONValue] = ["total": .int(statistics.errorCount)]
        for (kind, count) in statistics.errors { errors[kind.rawValue] = .int(count) }
        let line: [String: JSONValue] = [
            "type": "interval", "start": .double(start), "end": .double(end), "requests": .int(statistics.responses),
            "bytes": .int(statistics.bytesRead), "errors": .object(errors),
            "statuses": .object(
                Dictionary(uniqueKeysWithValues: statistics.unexpectedStatuses.map { (String($0.key), .int($0.value)) })),
            "latency_ms": BenchSummary.latencyObject(histogram), "histogram": .string(HistogramCoding.base64(histogram)),
        ]
        write(JSONValue.object(line).line, to: json)
    }

    private func begin(at start: Double) {
        startTime = start
        var comment = "Logged with wire bench: \(run.url)"
        if run.segment.count > 1 { comment += ", segment \(run.segment) of \(run.connections) connections" }
        if let rate = run.rate { comment += " at \(BenchSummary.count(rate)) requests/s" }
        write(HistogramLog.header(startTime: start, comment: comment), to: hlog)
    }

    /// Writes the summary line and closes the files; throws the first write that failed.
    func finish(summary: BenchSummary) throws(BenchLogError) {
        if startTime == nil { begin(at: Date().timeIntervalSince1970) }
        if case .object(var members) = summary.jsonObject {
            members["type"] = "summary"
            write(JSONValue.object(members).line, to: json)
        }
        for file in [hlog, json].compactMap({ $0 }) {
            do {
                try file.close()
            } catch {
                if failure == nil { failure = error }
            }
        }
        if let failure { throw failure }
    }

    private func write(_ text: String, to file: BenchLogFile?) {
        guard let file, failure == nil else { return }
        do {
            try file.write(text)
        } catch {
            failure = error
        }
    }
}

/// An interval log that could not be written.
struct BenchLogError: Error, CustomStringConvertible {
    let description: String

    init(description: String) { self.description = description }

    init(path: String, errno code: CInt) {
        description = "cannot write \(path): \(String(cString: strerror(code)))"
    }
}

extension JSONValue {
    /// The value on one line with no spaces and sorted keys (a JSON line); strings as `text` writes them.
    var line: String {
        var output: [UInt8] = []
        writeLine(to: &output)
        output.append(UInt8(ascii: "\n"))
        return String(decoding: output, as: UTF8.self)
    }

    private func writeLine(to output: inout [UInt8]) {
        switch self {
        case .null: output += "null".utf8
        case .bool(let value): output += (value ? "true" : "false").utf8
        case .int(let value): output += String(value).utf8
        case .double(let value): output += (value.isFinite ? String(value) : "null").utf8
        case .string(let value): JSONString.append(value, to: &output)
        case .array(let values):
            output.append(UInt8(ascii: "["))
            for (position, value) in values.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                value.writeLine(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (position, key) in members.keys.sorted().enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                JSONString.append(key, to: &output)
                output.append(UInt8(ascii: ":"))
                members[key]!.writeLine(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }
}
