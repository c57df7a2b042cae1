import FoundationEssentials
import Glibc
import Wire
import WireClient

// Large-body figures for issue 14: a multipart upload of one file part through HTTPSessionManager, and a download
// task to a file through SessionManager, each printed as one JSON line (bytes, wall seconds, MB/s, this process's
// CPU seconds and peak RSS), to set beside `curl -F` and `curl -o` timed by /usr/bin/time in the same run.
//
//   TransferFigures sink [PORT=0]          a Wire server that reads every request body to its end, then answers
//                                          204 (prints `listening on PORT` first)
//   TransferFigures upload FILE URL        POST FILE as the multipart part "file" (streamed, never in memory)
//   TransferFigures download URL DEST      a download task, moved to DEST
//
// Pin the server and the client to different cores, e.g.
//   taskset -c 0 .build/release/TransferFigures sink 18095 &
//   taskset -c 1 .build/release/TransferFigures upload /tmp/big http://127.0.0.1:18095/upload

func report(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
}

func usage() -> Never {
    report("usage: TransferFigures sink [PORT] | upload FILE URL | download URL DEST")
    exit(2)
}

/// This process's user+system seconds and peak RSS in KiB.
func resources() -> (cpu: Double, maxRSS: Int) {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    return (cpu, usage.ru_maxrss)
}

func summary(_ mode: String, bytes: Int64, since start: ContinuousClock.Instant) -> String {
    let elapsed = start.duration(to: .now)
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let (cpu, maxRSS) = resources()
    let megabytesPerSecond = Double(bytes) / seconds / 1e6
    return #"{"mode":"\#(mode)","bytes":\#(bytes),"seconds":\#(seconds),"MBps":\#(megabytesPerSecond),"cpu":\#(cpu),"maxRSSKiB":\#(maxRSS)}"#
}

/// Reads each request's body to its end before answering, so the client's figure is its whole upload; `GET /bytes/N`
/// answers N patterned bytes.
struct SinkHandler: HTTPHandler {
    func handle(_ request: HTTPServerRequest, response: HTTPResponseWriter) async throws {
        if request.method == .get, request.head.target.hasPrefix("/bytes/"), let count = Int(request.head.target.dropFirst(7)) {
            try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(bytes: patterned(count)))
            return
        }
        var received = 0
        for try await chunk in request.body { received += chunk.readableBytes }
        try await response.respond(HTTPResponseHead(status: .noContent, headers: ["X-Received": String(received)]),
                                   body: ByteBuffer())
    }
}

func patterned(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) } }

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { usage() }
switch arguments[1] {
case "sink":
    let port = arguments.count > 2 ? Int(arguments[2]) ?? 0 : 0
    var parser = HTTP1ParserConfiguration.strict
    parser.maxBodySize = Int.max
    let configuration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: port), parser: parser)
    let group = try EventLoopGroup(loopCount: 1)
    let server = HTTPServer(configuration: configuration, group: group, handler: SinkHandler())
    let bound = try await server.start()
    report("listening on \(bound.port ?? port)")
    // Serves until killed.
    while true { try await Task.sleep(for: .seconds(3600)) }
case "upload":
    guard arguments.count == 4 else { usage() }
    let path = arguments[2]
    var info = stat()
    guard stat(path, &info) == 0 else { usage() }
    let manager = try HTTPSessionManager(baseURL: nil)
    manager.responseSerializer = HTTPResponseSerializer()
    let start = ContinuousClock.now
    let result = try await manager.post(arguments[3], constructingBody: { form in
        try form.appendPart(fileAt: path, name: "file")
    })
    guard result.response?.statusCode == 204 || result.response?.statusCode == 200 else {
        report("unexpected status \(result.response?.statusCode ?? 0)")
        exit(1)
    }
    report(summary("upload", bytes: Int64(info.st_size), since: start))
case "download":
    guard arguments.count == 4 else { usage() }
    let destination = arguments[3]
    guard let url = URL(string: arguments[2]) else { usage() }
    let session = SessionManager(configuration: .default)
    let start = ContinuousClock.now
    let result = try await session.download(for: ClientRequest(url: url), destination: { _, _ in destination },
                                            replacesExistingFile: true)
    var info = stat()
    guard result.response?.statusCode == 200, stat(destination, &info) == 0 else {
        report("unexpected status \(result.response?.statusCode ?? 0)")
        exit(1)
    }
    report(summary("download", bytes: Int64(info.st_size), since: start))
default:
    usage()
}
