@_spi(Locking) import Wire

/// curl 7.88's combined progress meter for `-Z`: one header, then one line redrawn in place at most twice a second,
///
/// ```
/// DL% UL%  Dled  Uled  Xfers  Live Total     Current  Left    Speed
///  42 --  12.3M     0    20     4   0:00:03  0:00:01  0:00:02 9536k
/// ```
///
/// the percentage once every transfer in flight has told its length, the bytes received by all transfers, the
/// transfers started and those in flight, the times, and the speed over the last ten redraws. Shown (unlike curl,
/// which draws it even with `-s`) only when standard error is a terminal and neither `-s` nor `--no-progress-meter`
/// is given. Uploads are not counted: the upload columns stay `--` and 0.
package final class ParallelMeter: Sendable {
    /// The shortest time between two redraws, as curl's.
    static let redrawInterval = Duration.milliseconds(500)
    private static let samples = 10

    private struct Transfer {
        var received: Int64 = 0
        var total: Int64?
    }

    private struct State {
        var transfers: [Int: Transfer] = [:]
        var nextIdentifier = 0
        /// Bytes of the transfers that have ended.
        var finishedBytes: Int64 = 0
        /// The lengths told so far, of running and ended transfers alike (curl adds each once).
        var knownTotal: Int64 = 0
        var started = 0
        var headerShown = false
        var lastDraw: ContinuousClock.Instant?
        /// (bytes, time) at the last redraws, for the speed.
        var speedSamples: [(bytes: Int64, at: ContinuousClock.Instant)] = []
    }

    private let sink: OutputSink
    private let start = ContinuousClock.now
    private let state = Lock(State())

    /// Whether a run with these options draws the meter.
    static func isWanted(_ options: FetchOptions, standardError: OutputSink) -> Bool {
        !options.silent && !options.noProgressMeter && standardError.isTerminal
    }

    /// A meter drawn on `sink`.
    init(sink: OutputSink) {
        self.sink = sink
    }

    /// Counts a transfer that starts; returns its number for the calls that follow. (Not drawn yet: the transfers
    /// started together show together, as curl's first line shows them.)
    func begin() -> Int {
        state.withLock { state in
            state.nextIdentifier += 1
            state.started += 1
            state.transfers[state.nextIdentifier] = Transfer()
            return state.nextIdentifier
        }
    }

    /// The length the transfer's response announces (nil: unknown, and the percentage is not shown).
    func expect(_ transfer: Int, total: Int64?) {
        state.withLock { state in
            guard let total, total > 0, state.transfers[transfer]?.total == nil else { return }
            state.transfers[transfer]?.total = total
            state.knownTotal += total
        }
    }

    /// Counts `count` more bytes received.
    func advance(_ transfer: Int, by count: Int) {
        state.withLock { $0.transfers[transfer]?.received += Int64(count) }
        draw(final: false)
    }

    /// The transfer is over: its bytes stay counted.
    func end(_ transfer: Int) {
        state.withLock { state in
            if let ended = state.transfers.removeValue(forKey: transfer) { state.finishedBytes += ended.received }
        }
        draw(final: false)
    }

    /// Draws the last line and moves to the next line.
    func finish() {
        draw(final: true)
    }

    private func draw(final: Bool) {
        let now = ContinuousClock.now
        let text: String? = state.withLock { state in
            if !final, let last = state.lastDraw, now - last <= Self.redrawInterval { return nil }
            state.lastDraw = now
            var text = ""
            if !state.headerShown {
                state.headerShown = true
                text += "DL% UL%  Dled  Uled  Xfers  Live Total     Current  Left    Speed\n"
            }
            let received = state.finishedBytes + state.transfers.values.reduce(0) { $0 + $1.received }
            let lengthsKnown = state.transfers.values.allSatisfy { $0.total != nil }
            var percent = "--"
            if lengthsKnown && state.knownTotal > 0 {
                percent = Self.padded(
                    String(received.multipliedReportingOverflow(by: 100).partialValue / state.knownTotal), to: 3)
            }
            // The speed since the oldest of the last ten redraws (since the start until there are ten).
            state.speedSamples.append((received, now))
            if state.speedSamples.count > Self.samples { state.speedSamples.removeFirst() }
            let (fromBytes, fromTime) =
                state.speedSamples.count == Self.samples ? state.speedSamples[0] : (bytes: Int64(0), at: start)
            let elapsed = Self.seconds(now - fromTime)
            let speed = elapsed > 0 ? Int64(Double(received - fromBytes) / elapsed) : 0
            var total = Self.time(0)
            var left = Self.time(0)
            if lengthsKnown && speed > 0 {
                total = Self.time(state.knownTotal / speed)
                left = Self.time((state.knownTotal - received) / speed)
            }
            let spent = Self.time(Int64(Self.seconds(now - start)))
            text +=
                "\r" + Self.padded(percent, to: 3, left: false) + " " + "-- " + " " + Self.size(received) + " "
                + Self.size(0) + " " + Self.padded(String(state.started), to: 5) + " "
                + Self.padded(String(state.transfers.count), to: 5) + "  " + total + " " + spent + " " + left + " "
                + Self.size(speed) + " " + (final ? "    \n" : "     ")
            return text
        }
        // Cosmetic output: a failing standard error must not fail a transfer.
        if let text { try? sink.write(text) }
    }

    /// `text` padded with blanks to `width` (on the left by default, as printf's `%5s`; `left: false` as `%-3s`).
    package static func padded(_ text: String, to width: Int, left: Bool = true) -> String {
        let blanks = String(repeating: " ", count: max(0, width - text.count))
        return left ? blanks + text : text + blanks
    }

    /// curl's five-column size: bytes up to 99999, then `1234k`, `12.3M`, `1234M`, `12.3G`, `1234G`, `1234T`, `1234P`.
    package static func size(_ bytes: Int64) -> String {
        let kilo: Int64 = 1024
        let mega = kilo * 1024
        let giga = mega * 1024
        let tera = giga * 1024
        let text: String
        if bytes < 100_000 {
            text = String(bytes)
        } else if bytes < 10_000 * kilo {
            text = "\(bytes / kilo)k"
        } else if bytes < 100 * mega {
            text = "\(bytes / mega).\((bytes % mega) / (mega / 10))M"
        } else if bytes < 10_000 * mega {
            text = "\(bytes / mega)M"
        } else if bytes < 100 * giga {
            text = "\(bytes / giga).\((bytes % giga) / (giga / 10))G"
        } else if bytes < 10_000 * giga {
            text = "\(bytes / giga)G"
        } else if bytes < 10_000 * tera {
            text = "\(bytes / tera)T"
        } else {
            text = "\(bytes / (tera * 1024))P"
        }
        return padded(text, to: 5)
    }

    /// curl's eight-column time: `--:--:--` for none, `HH:MM:SS` (hours blank-padded) up to 99 hours, then days.
    package static func time(_ seconds: Int64) -> String {
        guard seconds > 0 else { return "--:--:--" }
        let hours = seconds / 3600
        if hours <= 99 {
            let minutes = (seconds % 3600) / 60
            let rest = seconds % 60
            return padded(String(hours), to: 2) + ":" + twoDigits(minutes) + ":" + twoDigits(rest)
        }
        let days = seconds / 86_400
        if days <= 999 { return padded(String(days), to: 3) + "d " + twoDigits((seconds % 86_400) / 3600) + "h" }
        return padded(String(days), to: 7) + "d"
    }

    private static func twoDigits(_ value: Int64) -> String { value < 10 ? "0\(value)" : String(value) }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
