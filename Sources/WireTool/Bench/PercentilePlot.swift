import Glibc
import Histogram

/// Draws latency by percentile as SVG: latency (ms) up the side, percentile along the bottom on
/// the usual logarithmic `1/(1-p)` axis, so the tail (99%, 99.9%, ...) gets as much room as the
/// body of the distribution.
struct PercentilePlot {
    var title: String
    var subtitle: String
    var histogram: Histogram<UInt64>

    private let width = 800.0
    private let height = 480.0
    private let left = 70.0
    private let right = 30.0
    private let top = 60.0
    private let bottom = 60.0

    /// The points of the curve: (log10 of 1/(1-p), latency in ms), p < 1.
    var points: [(x: Double, y: Double)] {
        var points: [(x: Double, y: Double)] = []
        for step in histogram.percentiles(ticksPerHalfDistance: 5) {
            let fraction = step.percentileLevelIteratedTo / 100
            guard fraction < 1 else { continue }
            points.append((log10(1 / (1 - fraction)), Double(step.value) / 1e6))
        }
        return points
    }

    /// The number of decades on the percentile axis: enough for the data (1/(1-p) up to the
    /// sample count), at least two (99%).
    var decades: Int {
        let needed = Int(log10(Double(max(histogram.totalCount, 1))).rounded(.up))
        let reached = Int((points.map(\.x).max() ?? 0).rounded(.up))
        return min(7, max(2, min(needed, max(reached, 2))))
    }

    /// The SVG document.
    var svg: String {
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let maxLatency = max(Double(histogram.max) / 1e6, points.map(\.y).max() ?? 0, 0.001)
        let yStep = Self.niceStep(maxLatency / 5)
        let yMax = (maxLatency / yStep).rounded(.up) * yStep
        let xMax = Double(decades)
        func x(_ value: Double) -> Double { left + min(value, xMax) / xMax * plotWidth }
        func y(_ value: Double) -> Double { top + plotHeight - value / yMax * plotHeight }

        var svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect x="0" y="0" width="\(Int(width))" height="\(Int(height))" fill="white"/>
            <text x="\(width / 2)" y="24" text-anchor="middle" font-size="15" font-weight="bold">\(Self.escape(title))</text>
            <text x="\(width / 2)" y="42" text-anchor="middle" fill="#555">\(Self.escape(subtitle))</text>

            """
        // Grid and ticks.
        var tick = 0.0
        while tick <= yMax + yStep / 2 {
            let position = Self.format(y(tick))
            svg +=
                "<line x1=\"\(Self.format(left))\" y1=\"\(position)\" x2=\"\(Self.format(left + plotWidth))\" y2=\"\(position)\" stroke=\"#e4e4e4\"/>\n"
            svg +=
                "<text x=\"\(Self.format(left - 8))\" y=\"\(position)\" text-anchor=\"end\" dominant-baseline=\"middle\">\(Self.tickLabel(tick))</text>\n"
            tick += yStep
        }
        for decade in 0...decades {
            let position = Self.format(x(Double(decade)))
            svg +=
                "<line x1=\"\(position)\" y1=\"\(Self.format(top))\" x2=\"\(position)\" y2=\"\(Self.format(top + plotHeight))\" stroke=\"#e4e4e4\"/>\n"
            svg +=
                "<text x=\"\(position)\" y=\"\(Self.format(top + plotHeight + 18))\" text-anchor=\"middle\">\(Self.percentileLabel(decade))</text>\n"
        }
        // Axes and labels.
        svg +=
            "<line x1=\"\(Self.format(left))\" y1=\"\(Self.format(top + plotHeight))\" x2=\"\(Self.format(left + plotWidth))\" y2=\"\(Self.format(top + plotHeight))\" stroke=\"black\"/>\n"
        svg +=
            "<line x1=\"\(Self.format(left))\" y1=\"\(Self.format(top))\" x2=\"\(Self.format(left))\" y2=\"\(Self.format(top + plotHeight))\" stroke=\"black\"/>\n"
        svg +=
            "<text x=\"\(Self.format(left + plotWidth / 2))\" y=\"\(Self.format(height - 14))\" text-anchor=\"middle\">percentile</text>\n"
        svg +=
            "<text x=\"18\" y=\"\(Self.format(top + plotHeight / 2))\" text-anchor=\"middle\" transform=\"rotate(-90 18 \(Self.format(top + plotHeight / 2)))\">latency (ms)</text>\n"
        // The curve.
        let curve = points.map { "\(Self.format(x($0.x))),\(Self.format(y($0.y)))" }.joined(separator: " ")
        svg += "<polyline fill=\"none\" stroke=\"#1f6fb4\" stroke-width=\"2\" points=\"\(curve)\"/>\n"
        svg += "</svg>\n"
        return svg
    }

    /// `0%`, `90%`, `99%`, `99.9%`...
    static func percentileLabel(_ decade: Int) -> String {
        guard decade > 0 else { return "0%" }
        guard decade > 2 else { return decade == 1 ? "90%" : "99%" }
        return "99." + String(repeating: "9", count: decade - 2) + "%"
    }

    /// 1, 2 or 5 times a power of ten, at least `rough`.
    static func niceStep(_ rough: Double) -> Double {
        let magnitude = pow(10, (log10(rough)).rounded(.down))
        for factor in [1.0, 2, 5, 10] where factor * magnitude >= rough { return factor * magnitude }
        return 10 * magnitude
    }

    static func tickLabel(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : DecimalText.short(value)
    }

    static func format(_ value: Double) -> String { DecimalText.fixed(value, decimals: 1) }

    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
