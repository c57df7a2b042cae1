import FoundationEssentials
import Histogram

/// HdrHistogram interval logs (format version 1.3), as `HistogramLogWriter` writes them and
/// `HistogramLogProcessor` and every HdrHistogram's log reader read them: a few `#[…]` header lines,
/// a legend, then one line per interval, `[Tag=NAME,]START,LENGTH,MAX,HISTOGRAM`, with times in
/// seconds (`START` from the base time), `MAX` in milliseconds (values are nanoseconds) and the
/// histogram compressed in base64.
package enum HistogramLog {
    /// One interval of a log.
    package struct Interval {
        /// The tag, if the line had one.
        package var tag: String?
        /// When the interval began, in seconds since the Unix epoch.
        package var start: Double
        /// Its length in seconds.
        package var length: Double
        /// The latencies recorded in it (nanoseconds).
        package var histogram: Histogram<UInt64>
    }

    /// A log that is not one.
    package struct ReadError: Error, CustomStringConvertible {
        /// What is wrong, with the line's number.
        package let description: String
    }

    /// The header: a comment, the format version, the start time (seconds since the epoch, then as
    /// RFC 3339) and the base time that interval starts count from, and the legend.
    package static func header(startTime: Double, comment: String) -> String {
        let seconds = DecimalText.fixed(startTime, decimals: 3)
        let date = Date(timeIntervalSince1970: startTime).formatted(.iso8601)
        return """
            #[\(comment)]
            #[Histogram log format version 1.3]
            #[StartTime: \(seconds) (seconds since epoch), \(date)]
            #[BaseTime: \(seconds) (seconds since epoch)]
            "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"

            """
    }

    /// One interval's line; `start` counts from the header's base time.
    package static func line(start: Double, length: Double, histogram: Histogram<UInt64>, tag: String? = nil) -> String {
        (tag.map { "Tag=\($0)," } ?? "") + DecimalText.fixed(start, decimals: 3) + ","
            + DecimalText.fixed(length, decimals: 3) + "," + DecimalText.fixed(Double(histogram.max) / 1e6, decimals: 3)
            + "," + HistogramCoding.base64(histogram) + "\n"
    }

    /// Reads every interval of a log. Start times become absolute as HdrHistogram's reader makes
    /// them: from the base time when the log gives one; else from the start time when they look
    /// relative (more than a year before it); else as they are.
    package static func read(_ text: String) throws(ReadError) -> [Interval] {
        var startTime: Double?
        var baseTime: Double?
        var intervals: [Interval] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            if line.isEmpty || line.hasPrefix("\"StartTimestamp\"") { continue }
            if line.hasPrefix("#[StartTime: ") {
                startTime = leadingNumber(line.dropFirst("#[StartTime: ".count))
                continue
            }
            if line.hasPrefix("#[BaseTime: ") {
                baseTime = leadingNumber(line.dropFirst("#[BaseTime: ".count))
                continue
            }
            if line.hasPrefix("#") { continue }
            var fields = line.split(separator: ",", omittingEmptySubsequences: false)
            var tag: String?
            if let first = fields.first, first.hasPrefix("Tag=") {
                tag = String(first.dropFirst(4))
                fields.removeFirst()
            }
            guard fields.count == 4, let start = Double(fields[0]), let length = Double(fields[1]), start.isFinite,
                length.isFinite, length >= 0
            else {
                throw ReadError(description: "line \(number + 1): expected START,LENGTH,MAX,HISTOGRAM")
            }
            let histogram: Histogram<UInt64>
            do {
                histogram = try HistogramCoding.decode(base64: fields[3])
            } catch {
                throw ReadError(description: "line \(number + 1): \(error)")
            }
            let base: Double
            if let baseTime {
                base = baseTime
            } else if let startTime, start < startTime - 365 * 24 * 3600 {
                base = startTime
            } else {
                base = 0
            }
            intervals.append(Interval(tag: tag, start: base + start, length: length, histogram: histogram))
        }
        return intervals
    }

    private static func leadingNumber(_ text: Substring) -> Double? {
        Double(text.prefix { $0.isNumber || $0 == "." || $0 == "-" })
    }
}
