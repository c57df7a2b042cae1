import Glibc
@_spi(Locking) import Wire

/// `--trace FILE` and `--trace-ascii FILE`: every byte a transfer writes and reads, in curl's layout. Sent and
/// received bytes are shown in plaintext (TLS encrypts below what Wire's byte tap sees); connecting and the TLS
/// handshake appear as `== Info:` lines.
///
/// ```
/// == Info: Connected to 127.0.0.1 (127.0.0.1) port 8080 (#0)
/// => Send header, 78 bytes (0x4e)
/// 0000: 47 45 54 20 2f 20 48 54 54 50 2f 31 2e 31 0d 0a GET / HTTP/1.1..
/// <= Recv header, 17 bytes (0x11)
/// ```
final class TraceWriter: Sendable {
    /// The kinds of records, with curl's words for them.
    enum Record: String {
        case sendHeader = "=> Send header"
        case sendData = "=> Send data"
        case receiveHeader = "<= Recv header"
        case receiveData = "<= Recv data"
    }

    /// Whether the dump has hex columns (`--trace`) or is text only (`--trace-ascii`).
    let ascii: Bool
    /// `--trace-time`: each line starts with the local time of day.
    let showsTime: Bool
    private let sink: Lock<OutputSink>

    /// A writer to `path` (`-` standard output, `%` standard error, as in curl).
    ///
    /// - Throws: `TransferFailure` with status 23 when the file cannot be created.
    init(path: String, ascii: Bool, showsTime: Bool) throws(TransferFailure) {
        self.ascii = ascii
        self.showsTime = showsTime
        sink = Lock(path == "%" ? .standardError : try OutputSink.file(path))
    }

    /// An `== Info:` line (`text` without its line end).
    func info(_ text: String) {
        write("\(timestamp())== Info: \(text)\n")
    }

    /// A record of `bytes`, dumped as curl dumps it.
    func record(_ kind: Record, _ bytes: some Collection<UInt8>) {
        write(Self.dump(kind.rawValue, Array(bytes), ascii: ascii, timestamp: timestamp()))
    }

    /// curl's dump: a title line with the size, then rows of 16 bytes as hex and text (`--trace`), or of up to 64
    /// bytes of text (`--trace-ascii`), where a CR LF also ends a row; each row starts with its offset.
    static func dump(_ title: String, _ bytes: [UInt8], ascii: Bool, timestamp: String = "") -> String {
        let width = ascii ? 0x40 : 0x10
        var text = "\(timestamp)\(title), \(bytes.count) bytes (0x\(String(bytes.count, radix: 16)))\n"
        var row = 0
        while row < bytes.count {
            text += hex(row, digits: 4) + ": "
            if !ascii {
                for column in 0..<width {
                    text += row + column < bytes.count ? hex(Int(bytes[row + column]), digits: 2) + " " : "   "
                }
            }
            var column = 0
            var next = row + width
            while column < width && row + column < bytes.count {
                let index = row + column
                if ascii && index + 1 < bytes.count && bytes[index] == 0x0D && bytes[index + 1] == 0x0A {
                    next = index + 2
                    break
                }
                let byte = bytes[index]
                text.unicodeScalars.append(byte >= 0x20 && byte < 0x80 ? Unicode.Scalar(byte) : ".")
                if ascii && index + 2 < bytes.count && bytes[index + 1] == 0x0D && bytes[index + 2] == 0x0A {
                    next = index + 3
                    break
                }
                column += 1
            }
            text += "\n"
            row = next
        }
        return text
    }

    private static func hex(_ value: Int, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// `HH:MM:SS.uuuuuu ` in local time with `--trace-time`, else nothing.
    private func timestamp() -> String {
        guard showsTime else { return "" }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let micros = String(now.tv_nsec / 1000)
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))."
            + String(repeating: "0", count: 6 - micros.count) + micros + " "
    }

    /// A trace that cannot be written is given up, as curl goes on with the transfer.
    private func write(_ text: String) {
        sink.withLock { sink in try? sink.write(text) }
    }
}

/// Splits the bytes read for one request into what curl's trace shows: each line of a response head (interim
/// `1xx` heads included) as a header record, everything after the final head as data.
struct ResponseSplitter {
    /// A piece of what was read.
    enum Piece: Equatable {
        case headerLine([UInt8])
        case data([UInt8])
    }

    private var inHead = true
    private var line: [UInt8] = []
    /// The first line of the head being read.
    private var statusLine: [UInt8]?

    /// The pieces `bytes` completes; a line cut by a read waits for its end.
    mutating func split(_ bytes: some Collection<UInt8>) -> [Piece] {
        var pieces: [Piece] = []
        var rest = bytes[...]
        while inHead, let byte = rest.first {
            rest = rest.dropFirst()
            line.append(byte)
            guard byte == 0x0A else { continue }
            pieces.append(.headerLine(line))
            let blank = line == [0x0D, 0x0A] || line == [0x0A]
            if statusLine == nil { statusLine = line }
            line = []
            if blank {
                // An interim head (100 Continue) is followed by another; 101 ends the exchange's HTTP.
                let code = statusLine.flatMap { Self.statusCode($0) } ?? 200
                statusLine = nil
                if code >= 200 || code == 101 { inHead = false }
            }
        }
        if !inHead && !rest.isEmpty { pieces.append(.data(Array(rest))) }
        return pieces
    }

    /// The status code of `HTTP/1.1 200 OK`.
    private static func statusCode(_ line: [UInt8]) -> Int? {
        let words = line.split(separator: 0x20, maxSplits: 2)
        guard words.count >= 2 else { return nil }
        return Int(String(decoding: words[1], as: UTF8.self))
    }
}
