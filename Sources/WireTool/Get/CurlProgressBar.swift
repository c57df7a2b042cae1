import Glibc

/// `-#`/`--progress-bar`: curl 7.88's bar on standard error (its `tool_cb_prg.c`), drawn the way curl draws it.
///
/// With a known length, a line of `#` for the share received over the terminal's width less 7 columns, then the
/// percentage as `%5.1f%%`, each drawing starting with `\r`; with none, a `-=O=-` that moves one column per drawing
/// with four `#` on a sine wave, each drawing ending with `\r`. Redrawn at most ten times a second (but always at
/// 100%), never on the first call (as curl's first callback comes before any byte), and ended with a line end. The
/// width is `COLUMNS` (21 to 9999), else the terminal's on standard input, else 79; at most 256.
package struct CurlProgressBar {
    private static let maximumWidth = 256
    /// curl's 200 points of a sine from 0 to 1 000 000 (computed as curl's table was, with π as 3.1415).
    private static let sine: [Int] = (1...200).map { Int(sin(Double($0) / 200 * 2 * 3.1415) * 500_000 + 500_000) }

    private let sink: OutputSink
    /// The body's announced length, nil when unknown.
    private let total: Int64?
    /// Bytes already in the file before this transfer (`-C`), counted in both the total and the progress, as curl does.
    private let initial: Int64
    let width: Int
    private var point: Int64
    private var calls = 0
    private var previous: Int64 = 0
    private var previousTime = ContinuousClock.now
    private var tick = 150
    private var flyer = 0
    private var flyerMove = 1

    /// Whether curl would draw it: not with `-s` or `--no-progress-meter`, nor for a body written to a terminal.
    static func isWanted(silent: Bool, toStandardOutput: Bool, standardOutputIsTerminal: Bool) -> Bool {
        !silent && !(toStandardOutput && standardOutputIsTerminal)
    }

    /// curl's width: `COLUMNS` when it is a number from 21 to 9999, else the terminal's width on standard input when
    /// above 20 columns, else 79; at most 256.
    package static func width(columns: String?, terminalColumns: Int?) -> Int {
        var width = 0
        if let columns, let number = Int(columns), columns.allSatisfy({ $0.isASCII && $0.isNumber }), number > 20,
            number < 10000
        {
            width = number
        }
        if width == 0, let terminalColumns, terminalColumns > 20 { width = terminalColumns }
        return width == 0 ? 79 : min(width, maximumWidth)
    }

    /// A bar for a body of `total` bytes (nil when unknown) after `initial` bytes already in place; this is curl's
    /// first callback, which draws nothing.
    init(
        total: Int64?, initial: Int64 = 0, sink: OutputSink,
        width: Int = Self.width(
            columns: getenv("COLUMNS").map { String(cString: $0) }, terminalColumns: Self.terminalColumns())
    ) {
        self.sink = sink
        self.total = total
        self.initial = initial
        self.width = width
        point = initial
        update(now: .now)
    }

    /// Counts `count` more bytes and redraws when curl would.
    mutating func advance(by count: Int, now: ContinuousClock.Instant = .now) {
        point += Int64(count)
        update(now: now)
    }

    /// curl's last callback at the end of the transfer, then the line end.
    mutating func finish(now: ContinuousClock.Instant = .now) {
        update(now: now)
        // Cosmetic output: a failing standard error must not fail the transfer.
        if calls > 0 { try? sink.write("\n") }
    }

    /// What curl's callback does with the totals it is given.
    private mutating func update(now: ContinuousClock.Instant) {
        var total = (total ?? 0) + initial
        let sinceLast = now - previousTime
        if calls > 0 {
            if total > 0 {
                if previous == point { return }
                if sinceLast < .milliseconds(100) && point < total { return }
            } else {
                if sinceLast < .milliseconds(100) { return }
                fly(moved: point != previous)
            }
        }
        calls += 1
        if total > 0 && point != previous {
            if point > total { total = point }
            let fraction = Double(point) / Double(total)
            let barWidth = width - 7
            let count = min(Int(Double(barWidth) * fraction), Self.maximumWidth)
            let hashes = String(repeating: "#", count: count)
            let padding = String(repeating: " ", count: max(0, barWidth - count))
            write("\r" + hashes + padding + " " + Self.percent(fraction * 100) + "%")
        }
        previous = point
        previousTime = now
    }

    /// One frame of the bar of unknown length.
    private mutating func fly(moved: Bool) {
        var line = [UInt8](repeating: UInt8(ascii: " "), count: width - 1)
        line.replaceSubrange(flyer..<(flyer + 5), with: "-=O=-".utf8)
        let check = width - 2
        for offset in [0, 5, 10, 15] {
            line[Self.sine[(tick + offset) % 200] / (1_000_000 / check)] = UInt8(ascii: "#")
        }
        write(String(decoding: line, as: UTF8.self) + "\r")
        tick += 2
        if tick >= 200 { tick -= 200 }
        if moved { flyer += flyerMove }
        if flyer >= width - 6 {
            flyerMove = -1
            flyer = width - 6
        } else if flyer < 0 {
            flyerMove = 1
            flyer = 0
        }
    }

    private func write(_ text: String) {
        try? sink.write(text)
    }

    /// `%5.1f` as C's printf rounds it.
    package static func percent(_ value: Double) -> String {
        var buffer = [CChar](repeating: 0, count: 32)
        _ = withVaList([value]) { vsnprintf(&buffer, buffer.count, "%5.1f", $0) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The terminal's width on standard input, as curl asks it (`TIOCGWINSZ`).
    private static func terminalColumns() -> Int? {
        var size = winsize()
        guard ioctl(STDIN_FILENO, UInt(TIOCGWINSZ), &size) == 0 else { return nil }
        return Int(size.ws_col)
    }
}
