import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Wire

// Parse speed of Wire's HTTP1Parser and of NIO's HTTP/1.1 decoder (llhttp inside), on the same bytes.
//
// Each message arrives as its own buffer, as one read per message would deliver it, to a parser that lives as long
// as the connection. Wire: `HTTP1Parser.parse` until `.end`. NIO: `EmbeddedChannel.writeInbound` into
// `ByteToMessageHandler(HTTPRequestDecoder/HTTPResponseDecoder)` with a last handler that counts parts; that is
// how NIO runs its decoder on a real channel, minus the socket. Both produce a full head (method, target, fields)
// and body slices without copying the body. A run parses `count` messages; the figure is the median of the runs,
// with the fastest and slowest run as the spread. Pin the process (`taskset -c 1`) for stable numbers.

/// Command-line options: `--runs N` (default 11), `--scale X` multiplies the messages per run (default 1).
struct Options {
    var runs = 11
    var scale = 1.0

    init() {
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = arguments.next() {
            switch argument {
            case "--runs": runs = Int(arguments.next() ?? "") ?? runs
            case "--scale": scale = Double(arguments.next() ?? "") ?? scale
            default:
                FileHandle.standardError.write(Data("usage: ParseFigures [--runs N] [--scale X]\n".utf8))
                exit(2)
            }
        }
    }
}

/// One workload: a message and how many of it a run parses.
struct Workload {
    var name: String
    var kind: HTTP1Parser.Kind
    var message: [UInt8]
    var count: Int
    /// How many parts NIO's decoder fires per message (head, body parts, end), for the pipeline baseline.
    var nioParts: Int
}

/// A realistic browser navigation request: 12 fields, about 700 bytes.
let browserGet = Array(
    ("GET /wiki/Hypertext_Transfer_Protocol?action=view&section=3 HTTP/1.1\r\n"
        + "Host: en.wikipedia.org\r\n"
        + "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n"
        + "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8\r\n"
        + "Accept-Language: en-US,en;q=0.5\r\n"
        + "Accept-Encoding: gzip, deflate, br, zstd\r\n"
        + "Referer: https://en.wikipedia.org/wiki/Main_Page\r\n"
        + "Connection: keep-alive\r\n"
        + "Cookie: enwikimwuser-sessionId=3f9a1c0b7e2d4c5a8b6f; WMF-Last-Access=21-Nov-2026; "
        + "GeoIP=US:CA:San_Francisco:37.77:-122.42:v4; enwikiUserName=Example; centralauth_User=Example\r\n"
        + "Upgrade-Insecure-Requests: 1\r\n"
        + "Sec-Fetch-Dest: document\r\n"
        + "Sec-Fetch-Mode: navigate\r\n"
        + "Sec-Fetch-Site: same-origin\r\n"
        + "\r\n").utf8)

/// A small response with 20 fields and a 13-byte body.
let smallResponse: [UInt8] = {
    var text = "HTTP/1.1 200 OK\r\n"
    let fields = [
        ("Date", "Sat, 21 Nov 2026 12:00:00 GMT"), ("Server", "wire"), ("Content-Type", "text/plain; charset=utf-8"),
        ("Content-Length", "13"), ("Cache-Control", "private, max-age=0"), ("ETag", "\"33a64df5\""),
        ("Last-Modified", "Fri, 20 Nov 2026 08:00:00 GMT"), ("Vary", "Accept-Encoding"), ("X-Request-Id", "f0e1d2c3"),
        ("X-Frame-Options", "DENY"), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
        ("Strict-Transport-Security", "max-age=63072000"), ("Access-Control-Allow-Origin", "*"),
        ("Connection", "keep-alive"), ("Keep-Alive", "timeout=5"), ("Age", "0"), ("Accept-Ranges", "bytes"),
        ("X-Cache", "MISS"), ("Server-Timing", "app;dur=1.2"),
    ]
    precondition(fields.count == 20)
    for (name, value) in fields { text += "\(name): \(value)\r\n" }
    return Array((text + "\r\nHello, world!").utf8)
}()

/// A 1 MiB body in 64 chunks of 16 KiB.
let chunkedResponse: [UInt8] = {
    var bytes = Array("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
    let chunk = (0..<16 * 1024).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    for _ in 0..<64 {
        bytes += Array("4000\r\n".utf8)
        bytes += chunk
        bytes += [0x0D, 0x0A]
    }
    return bytes + Array("0\r\n\r\n".utf8)
}()

/// What a run saw, to check both parsers did the same work and to keep the optimizer honest.
struct Tally: Equatable {
    var messages = 0
    var bodyBytes = 0
}

// MARK: Wire

/// Parses `count` copies of `message`, one buffer each, with one parser.
func runWire(_ workload: Workload) -> Tally {
    var tally = Tally()
    var parser = HTTP1Parser(kind: workload.kind)
    timedSection {
        let bytes = workload.message.span
        for _ in 0..<workload.count {
            if workload.kind == .response { parser.expectResponse(to: .get) }
            var offset = 0
            parsing: while true {
                let step: HTTP1ParseStep
                do {
                    step = try parser.parse(bytes.extracting(offset...))
                } catch {
                    fatalError("Wire refused the benchmark message: \(error)")
                }
                switch step.event {
                case .requestHead, .responseHead: break
                case .body(let range): tally.bodyBytes &+= range.count
                case .end:
                    tally.messages += 1
                    offset += step.consumed
                    break parsing
                case .upgraded, nil: fatalError("unexpected step \(step)")
                }
                offset += step.consumed
            }
            precondition(offset == bytes.count)
        }
    }
    return tally
}

// MARK: NIO

/// Last handler of the pipeline: counts messages and body bytes, forwards nothing.
final class CountingHandler<Part>: ChannelInboundHandler {
    typealias InboundIn = Part
    var tally = Tally()
    private let classify: (Part) -> (isEnd: Bool, bodyBytes: Int)

    init(classify: @escaping (Part) -> (isEnd: Bool, bodyBytes: Int)) {
        self.classify = classify
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let (isEnd, bodyBytes) = classify(unwrapInboundIn(data))
        tally.bodyBytes &+= bodyBytes
        if isEnd { tally.messages += 1 }
    }
}

/// First handler of the pipeline: drops outbound writes (the request heads a response decoder must observe), so
/// they do not pile up in the embedded channel.
final class DiscardingOutboundHandler: ChannelOutboundHandler {
    typealias OutboundIn = NIOAny

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        promise?.succeed(())
    }
}

/// Parses `count` copies of `message`, one `writeInbound` each, through one channel.
func runNIO(_ workload: Workload) -> Tally {
    let channel = EmbeddedChannel()
    let buffer = NIOCore.ByteBuffer(bytes: workload.message)
    do {
        switch workload.kind {
        case .request:
            let counter = CountingHandler<HTTPServerRequestPart> { part in
                switch part {
                case .head: return (false, 0)
                case .body(let body): return (false, body.readableBytes)
                case .end: return (true, 0)
                }
            }
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
            try channel.pipeline.syncOperations.addHandler(counter)
            return timedSection {
                for _ in 0..<workload.count {
                    try! channel.writeInbound(buffer)
                }
                _ = try! channel.finish()
                return counter.tally
            }
        case .response:
            let counter = CountingHandler<HTTPClientResponsePart> { part in
                switch part {
                case .head: return (false, 0)
                case .body(let body): return (false, body.readableBytes)
                case .end: return (true, 0)
                }
            }
            try channel.pipeline.syncOperations.addHandler(DiscardingOutboundHandler())
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPResponseDecoder()))
            try channel.pipeline.syncOperations.addHandler(counter)
            // The decoder frames a response by the request it answers; it learns requests by observing writes.
            // Queue them all before the clock starts, so only parsing is timed.
            let request = HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"))
            for _ in 0..<workload.count {
                channel.write(request, promise: nil)
            }
            return timedSection {
                for _ in 0..<workload.count {
                    try! channel.writeInbound(buffer)
                }
                _ = try! channel.finish()
                return counter.tally
            }
        }
    } catch {
        fatalError("NIO pipeline set-up failed: \(error)")
    }
}

/// Consumes each buffer whole and fires as many parts as the HTTP decoder would, without parsing: what remains
/// of NIO's figure after subtracting this is its decoder's own work.
struct NullDecoder: ByteToMessageDecoder {
    typealias InboundOut = Int
    let parts: Int

    mutating func decode(context: ChannelHandlerContext, buffer: inout NIOCore.ByteBuffer) throws -> DecodingState {
        guard buffer.readableBytes > 0 else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        for part in 1...parts {
            context.fireChannelRead(wrapInboundOut(part == parts ? 0 : 1))
        }
        return .needMoreData
    }

    mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout NIOCore.ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}

/// NIO's per-message cost without the HTTP decoder: the same channel, handler and part dispatch, no parsing.
func runNIOBaseline(_ workload: Workload) -> Tally {
    let channel = EmbeddedChannel()
    let buffer = NIOCore.ByteBuffer(bytes: workload.message)
    let counter = CountingHandler<Int> { part in (part == 0, 0) }
    do {
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(NullDecoder(parts: workload.nioParts)))
        try channel.pipeline.syncOperations.addHandler(counter)
    } catch {
        fatalError("NIO pipeline set-up failed: \(error)")
    }
    return timedSection {
        for _ in 0..<workload.count {
            try! channel.writeInbound(buffer)
        }
        _ = try! channel.finish()
        return counter.tally
    }
}

// MARK: Timing

/// Set by `timedSection`: the measured closures time only their parsing loop, not channel or parser set-up.
nonisolated(unsafe) var sectionNanoseconds: UInt64?

func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

func timedSection<T>(_ body: () -> T) -> T {
    let start = now()
    let result = body()
    sectionNanoseconds = now() - start
    return result
}

/// Median, fastest and slowest nanoseconds per message over `runs` runs, after one warm-up run.
func measure(_ workload: Workload, runs: Int, _ body: (Workload) -> Tally) -> (median: Double, low: Double, high: Double, tally: Tally) {
    let expected = body(workload)  // warm-up: caches, allocator, branch predictors
    var perMessage: [Double] = []
    for _ in 0..<runs {
        sectionNanoseconds = nil
        let start = now()
        let tally = body(workload)
        let elapsed = sectionNanoseconds ?? (now() - start)
        precondition(tally == expected, "runs disagree")
        perMessage.append(Double(elapsed) / Double(workload.count))
    }
    perMessage.sort()
    return (perMessage[perMessage.count / 2], perMessage.first!, perMessage.last!, expected)
}

func formatRate(_ bytesPerSecond: Double) -> String {
    bytesPerSecond >= 1e9
        ? String(format: "%.2f GB/s", bytesPerSecond / 1e9) : String(format: "%.0f MB/s", bytesPerSecond / 1e6)
}

func formatTime(_ nanoseconds: Double) -> String {
    nanoseconds >= 10_000 ? String(format: "%.1f µs", nanoseconds / 1000) : String(format: "%.0f ns", nanoseconds)
}

let options = Options()
let workloads = [
    Workload(name: "browser GET, \(browserGet.count) B, 12 fields", kind: .request, message: browserGet,
             count: Int(20_000 * options.scale), nioParts: 2),
    Workload(name: "response, \(smallResponse.count) B, 20 fields", kind: .response, message: smallResponse,
             count: Int(20_000 * options.scale), nioParts: 3),
    Workload(name: "1 MiB chunked body, 16 KiB chunks", kind: .response, message: chunkedResponse,
             count: max(1, Int(100 * options.scale)), nioParts: 66),
]

print("| workload | parser | time per message (median) | spread (min–max) | throughput | NIO time ÷ Wire time |")
print("|---|---|---:|---:|---:|---:|")
for workload in workloads {
    let wire = measure(workload, runs: options.runs, runWire)
    let nio = measure(workload, runs: options.runs, runNIO)
    let baseline = measure(workload, runs: options.runs, runNIOBaseline)
    precondition(wire.tally == nio.tally, "Wire saw \(wire.tally), NIO saw \(nio.tally)")
    precondition(wire.tally.messages == workload.count && baseline.tally.messages == workload.count)
    for (name, figures) in [("Wire", wire), ("NIO (llhttp)", nio), ("NIO pipeline alone, no parsing", baseline)] {
        let rate = Double(workload.message.count) / figures.median * 1e9
        if name.hasPrefix("NIO pipeline") {
            print("| | \(name) | \(formatTime(figures.median)) | \(formatTime(figures.low))–\(formatTime(figures.high)) | | |")
            continue
        }
        let ratio = name == "Wire" ? String(format: "%.2f", nio.median / wire.median) : ""
        print("| \(workload.name) | \(name) | \(formatTime(figures.median)) | \(formatTime(figures.low))–\(formatTime(figures.high)) | \(formatRate(rate)) | \(ratio) |")
    }
}
