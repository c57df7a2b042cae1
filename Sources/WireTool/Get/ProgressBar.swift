/// Wire's own one-line progress bar on standard error for a download to a file, redrawn in place at most ten times a
/// second (`-#` draws curl's instead: `CurlProgressBar`).
///
/// Shown only when it helps and cannot get in the way (`isWanted`): the body goes to a file, standard error is a
/// terminal, `-s` was not given, and the body is large (over 1 MiB) or of unknown length.
struct ProgressBar {
    /// Bodies at most this long finish too fast for a bar to be worth drawing.
    static let threshold = 1 << 20
    /// The shortest time between two redraws.
    static let redrawInterval = Duration.milliseconds(100)
    private static let barWidth = 24

    private let sink: OutputSink
    private let total: Int?
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private var lastDraw: ContinuousClock.Instant?
    private var received = 0

    /// Whether a transfer gets a bar.
    ///
    /// - Parameters:
    ///   - total: The announced body length, nil when unknown (chunked or close-delimited).
    ///   - toFile: Whether the body goes to a file (with it on standard output, the bar would mix with it on a
    ///     terminal).
    ///   - silent: `-s`.
    ///   - stderrIsTerminal: `isatty(2)`: a bar in a log file is noise.
    static func isWanted(total: Int?, toFile: Bool, silent: Bool, stderrIsTerminal: Bool) -> Bool {
        toFile && !silent && stderrIsTerminal && (total.map { $0 > threshold } ?? true)
    }

    /// A bar for a body of `total` bytes (nil when unknown), drawn on `sink`.
    init(total: Int?, sink: OutputSink) {
        self.total = total
        self.sink = sink
        start = clock.now
    }

    /// Counts `count` more bytes and redraws if the last drawing is old enough.
    mutating func advance(by count: Int) {
        received += count
        let now = clock.now
        if let lastDraw, now - lastDraw < Self.redrawInterval { return }
        lastDraw = now
        draw(now: now)
    }

    /// Draws the final state and moves to the next line.
    mutating func finish() {
        draw(now: clock.now)
        // Cosmetic output: a failing standard error must not fail the transfer.
        try? sink.write("\n")
    }

    private func draw(now: ContinuousClock.Instant) {
        let elapsed = Self.seconds(now - start)
        let rate = elapsed > 0 ? Double(received) / elapsed : 0
        var line = "\r"
        if let total, total > 0 {
            let fraction = min(1, Double(received) / Double(total))
            let filled = Int(fraction * Double(Self.barWidth))
            let percent = Int(fraction * 100)
            line += String(repeating: " ", count: percent < 10 ? 2 : percent < 100 ? 1 : 0) + "\(percent)% ["
            line += String(repeating: "#", count: filled) + String(repeating: " ", count: Self.barWidth - filled) + "] "
            line += "\(Self.size(received)) / \(Self.size(total))"
        } else {
            line += "\(Self.size(received))"
        }
        // A rate over the first few milliseconds is noise (the first chunk was already buffered).
        if now - start >= Self.redrawInterval { line += "  \(Self.size(Int(rate)))/s" }
        line += "   "
        try? sink.write(line)
    }

    /// `512 B`, `12.3 KiB`, `4.0 MiB`, `1.2 GiB`.
    static func size(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
