import FoundationEssentials
import Wire

/// One line of a recording (`wire get --record FILE`, `wire serve --record DIR`): the format `wire-record`, version 1,
/// JSON lines, documented in the README ("Record and replay"). Every line is an object with a `type`:
///
/// - `header`, first and once: `format` ("wire-record"), `version` (1), `role` ("client" or "server": the side
///   that recorded), `tool` (the tool's version), `url` (what was fetched, or where the server listened),
///   `started` (the wall-clock start, RFC 3339 in UTC) and `started_unix` (the same in seconds since 1970).
/// - `data`: bytes of one write or one read, in plaintext (above TLS). `t` is the time in seconds since the start
///   (a monotonic clock), `conn` the connection's number, `dir` "out" (written by the recording side) or "in" (read
///   by it), `data` the bytes in base64; on the client side `exchange` names the request they belong to.
/// - `end`: one side sent end of stream (`dir` as above); `close`: the connection closed (`error` says why, when
///   it was not orderly). Server recordings have them; the client's byte tap sees no connection ends.
/// - `metrics` (client side, one per request, after its bytes): `exchange`, `conn`, `t` (when the request was
///   started), `method`, `url`, `status`, `reused`, `local`, `remote`, `tls` and `timings` in seconds: `queued`
///   (waiting for a connection), then, on a new connection and counted from when it began opening (that is,
///   `queued` after the request started), `name_resolved`, `connected` and `secure_connected`; and from the
///   request's start `request_sent`, `first_byte` and `last_byte`. A phase that did not happen is left out.
///   Server side, one per exchange as it ends: `exchange` (its number on the connection, from 0), `conn`, `t` (when
///   its request head was in), `method`, `url`, `status`, `local`, `remote`, `bytes_in` and `bytes_out` (read and
///   written on the connection since the previous exchange ended), `error` (an exchange that ended without its
///   whole response) and `timings` from `t`: `response_started` (the head queued) and `response_ended` (the whole
///   response queued).
struct RecordLine: Codable, Equatable, Sendable {
    var type: Kind
    var format: String?
    var version: Int?
    var role: Role?
    var tool: String?
    var url: String?
    var started: String?
    var startedUnix: Double?
    var t: Double?
    var conn: Int?
    var dir: Direction?
    var data: Data?
    var exchange: Int?
    var error: String?
    var method: String?
    var status: Int?
    var reused: Bool?
    var local: String?
    var remote: String?
    var tls: TLSFacts?
    var timings: Timings?
    var bytesIn: Int?
    var bytesOut: Int?

    /// The kinds of line.
    enum Kind: String, Codable, Sendable {
        case header, data, end, close, metrics
    }

    /// Which side recorded.
    enum Role: String, Codable, Sendable {
        case client, server
    }

    /// Which way bytes went, seen from the recording side.
    enum Direction: String, Codable, Sendable {
        case out, `in`
    }

    /// What TLS negotiated.
    struct TLSFacts: Codable, Equatable, Sendable {
        var version: String
        var cipher: String
        var alpn: String?
        var resumed: Bool
    }

    /// A request's phases, in seconds (see the type's documentation for their origins).
    struct Timings: Codable, Equatable, Sendable {
        /// Client side: always there.
        var queued: Double?
        var nameResolved: Double?
        var connected: Double?
        var secureConnected: Double?
        var requestSent: Double?
        var firstByte: Double?
        var lastByte: Double?
        /// Server side.
        var responseStarted: Double?
        var responseEnded: Double?

        init(
            queued: Double? = nil, nameResolved: Double? = nil, connected: Double? = nil, secureConnected: Double? = nil,
            requestSent: Double? = nil, firstByte: Double? = nil, lastByte: Double? = nil, responseStarted: Double? = nil,
            responseEnded: Double? = nil
        ) {
            self.queued = queued
            self.nameResolved = nameResolved
            self.connected = connected
            self.secureConnected = secureConnected
            self.requestSent = requestSent
            self.firstByte = firstByte
            self.lastByte = lastByte
            self.responseStarted = responseStarted
            self.responseEnded = responseEnded
        }

        enum CodingKeys: String, CodingKey {
            case queued
            case nameResolved = "name_resolved"
            case connected
            case secureConnected = "secure_connected"
            case requestSent = "request_sent"
            case firstByte = "first_byte"
            case lastByte = "last_byte"
            case responseStarted = "response_started"
            case responseEnded = "response_ended"
        }
    }

    enum CodingKeys: String, CodingKey {
        case type, format, version, role, tool, url, started
        case startedUnix = "started_unix"
        case t, conn, dir, data, exchange, error, method, status, reused, local, remote, tls, timings
        case bytesIn = "bytes_in"
        case bytesOut = "bytes_out"
    }

    init(type: Kind) {
        self.type = type
    }

    /// The format's name, in every header.
    static let formatName = "wire-record"
    /// The version this tool writes and reads.
    static let formatVersion = 1
}

/// A recording's lines, encoded and decoded.
enum RecordFile {
    /// A recording that cannot be read: what is wrong, and on which line (1-based).
    struct ReadError: Error, CustomStringConvertible {
        var line: Int
        var message: String
        var description: String { line > 0 ? "line \(line): \(message)" : message }
    }

    /// The header line for a recording that starts now.
    static func header(role: RecordLine.Role, url: String, wallClock: Double) -> RecordLine {
        var line = RecordLine(type: .header)
        line.format = RecordLine.formatName
        line.version = RecordLine.formatVersion
        line.role = role
        line.tool = "wire \(WireVersion.number)"
        line.url = url
        line.started = Timestamp.rfc3339(wallClock)
        line.startedUnix = (wallClock * 1_000_000).rounded() / 1_000_000
        return line
    }

    /// `lines` as the file's bytes, one JSON object per line.
    static func encode(_ lines: [RecordLine]) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var bytes: [UInt8] = []
        for line in lines {
            // Encoding these value types cannot fail: no non-finite number is ever stored (`seconds` rounds).
            guard let encoded = try? encoder.encode(line) else { continue }
            bytes += encoded
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    /// Reads a recording: its header first, of this format and version.
    static func decode(_ bytes: [UInt8]) throws(ReadError) -> [RecordLine] {
        let decoder = JSONDecoder()
        var lines: [RecordLine] = []
        var number = 0
        for text in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            if text.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            let line: RecordLine
            do { line = try decoder.decode(RecordLine.self, from: Data(text)) } catch {
                throw ReadError(line: number, message: "not a record line: \(error)")
            }
            if lines.isEmpty {
                guard line.type == .header, line.format == RecordLine.formatName else {
                    throw ReadError(line: number, message: "not a wire-record file (its first line is no header)")
                }
                guard line.version == RecordLine.formatVersion else {
                    throw ReadError(
                        line: number,
                        message: "version \(line.version.map(String.init) ?? "none") of the format; this tool reads "
                            + "version \(RecordLine.formatVersion)")
                }
                guard line.role != nil else { throw ReadError(line: number, message: "the header names no role") }
            }
            if line.type == .data {
                guard line.t != nil, line.conn != nil, line.dir != nil, line.data != nil else {
                    throw ReadError(line: number, message: "a data line needs t, conn, dir and data")
                }
            }
            lines.append(line)
        }
        guard !lines.isEmpty else { throw ReadError(line: 0, message: "the file is empty") }
        return lines
    }

    /// Seconds as a JSON number, to the nanosecond.
    static func seconds(_ duration: Duration) -> Double {
        let (whole, attoseconds) = duration.components
        return Double(whole) + Double(attoseconds / 1_000_000_000) / 1_000_000_000
    }

    /// `address` as `host:port` (`[v6]:port`), or its description for a Unix socket.
    static func text(_ address: SocketAddress?) -> String? {
        guard let address else { return nil }
        guard let port = address.port else { return address.host }
        return address.family == .ipv6 ? "[\(address.host)]:\(port)" : "\(address.host):\(port)"
    }
}

/// Wall-clock times as text.
enum Timestamp {
    /// The wall clock now, in seconds since 1970.
    static func now() -> Double { Date().timeIntervalSince1970 }

    /// `seconds` since 1970 as RFC 3339 in UTC with milliseconds (`2026-01-31T12:00:00.123Z`), as HAR wants.
    static func rfc3339(_ seconds: Double) -> String {
        let millis = Int64((seconds * 1000).rounded(.down))
        let days = millis >= 0 ? millis / 86_400_000 : (millis - 86_399_999) / 86_400_000
        let inDay = millis - days * 86_400_000
        let (year, month, day) = HTTPFieldDate.civilDate(daysSinceEpoch: Int(days))
        func two<Number: BinaryInteger>(_ value: Number) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millisText = String(inDay % 1000)
        return "\(year)-\(two(month))-\(two(day))T\(two(inDay / 3_600_000)):\(two(inDay / 60_000 % 60)):"
            + "\(two(inDay / 1000 % 60)).\(String(repeating: "0", count: 3 - millisText.count))\(millisText)Z"
    }
}
