import FoundationEssentials
import Glibc
import Synchronization
import Wire
import WireClient

// Manager-layer figures: C concurrent keep-alive GET loops for S seconds, either straight through Wire's
// `HTTPClient` or through WireClient's `HTTPSessionManager` adopting an identically configured client, so that the
// two differ only by the manager layer (task, delegate, serializer, completion hand-over). Prints one JSON line per
// run in the shape of ClientFigures: requests/s and this process's CPU per request.
//
//   ManagerFigures MODE URL [CONNECTIONS=64] [SECONDS=4] [REQUESTS]
//
// With REQUESTS the timed part sends exactly that many requests (SECONDS is ignored): for counts per request
// (`malloc` with an LD_PRELOAD counter, `perf probe` events), where two runs of different REQUESTS give the cost of
// one request without the start-up. (valgrind cannot run it: it does not follow Swift's global executor.)
//
// MODE:
//   client     HTTPClient: execute, collect the body (the floor)
//   same       client, sending the fields the manager's GET carries (Accept-Language, User-Agent, Accept-Encoding):
//              the same request bytes on the wire
//   data       HTTPSessionManager.get with HTTPResponseSerializer (status and content-type checks, Data back)
//   json       HTTPSessionManager.get with JSONResponseSerializer (a JSONValue tree)
//   decodable  HTTPSessionManager.get with DecodableResponseSerializer<User> (JSONDecoder into a struct)
// and, to take the difference apart: observed (client with a request observer, as the manager sets one for a
// request with a body), hopped (client inside a Task of its own, as a callback task's driver), iterated (client
// with the body read chunk by chunk), built (the manager's value work without its task: the verb's request, sent
// by HTTPClient from its URL, the body into a Data, the response made and serialized).
//
// Run it pinned to one core and nginx to the other, alternating the modes, e.g.
//   taskset -c 1 .build/release/ManagerFigures data http://127.0.0.1:18080/user.json 64 4

func report(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
}

func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// The body the JSON rows decode (Benchmarks/README's `user.json`; any object with these keys works).
struct User: Decodable, Sendable {
    let id: Int
    let login: String
    let name: String
    let admin: Bool
    let tags: [String]
}

enum Mode: String { case client, same, observed, hopped, iterated, built, data, json, decodable }

let arguments = CommandLine.arguments
guard arguments.count >= 3, let mode = Mode(rawValue: arguments[1]) else {
    report("usage: ManagerFigures client|same|observed|hopped|iterated|built|data|json|decodable URL [CONNECTIONS=64] [SECONDS=4] [REQUESTS]")
    exit(2)
}
let url = arguments[2]
let connections = arguments.count > 3 ? Int(arguments[3]) ?? 64 : 64
let seconds = arguments.count > 4 ? Double(arguments[4]) ?? 4 : 4
let fixedCount = arguments.count > 5 ? Int(arguments[5]) : nil
if arguments.count > 5 && fixedCount == nil {
    report("REQUESTS must be a whole number, not \(arguments[5])")
    exit(2)
}

// One loop, one client, configured as a session configures its own (no redirects, no User-Agent of Wire's), so
// both paths run the same engine.
let group = try EventLoopGroup(loopCount: 1)
var clientConfiguration = HTTPClientConfiguration()
clientConfiguration.maxConnectionsPerHost = connections
clientConfiguration.redirects = .disallow
clientConfiguration.userAgent = nil
let client = try HTTPClient(configuration: clientConfiguration, group: group)

var sessionConfiguration = SessionConfiguration.default
sessionConfiguration.httpClient = client
let manager = try HTTPSessionManager(configuration: sessionConfiguration)
switch mode {
case .client, .same, .observed, .hopped, .iterated, .built, .data: manager.responseSerializer = HTTPResponseSerializer()
case .json: manager.responseSerializer = JSONResponseSerializer()
case .decodable: manager.responseSerializer = DecodableResponseSerializer<User>()
}

/// The fields the manager's GET carries on the wire (the serializer's `Accept-Language` and `User-Agent`, the
/// session's `Accept-Encoding`), for `same`: HTTPClient sending the same request bytes. Made once, as a client that
/// sends the same fields each time would hold them.
let managerFields: HTTPHeaders = {
    var fields = (try? manager.request(method: "GET", path: url).headers) ?? HTTPHeaders()
    fields.add(name: "Accept-Encoding", value: "gzip, deflate")
    return fields
}()

/// One request of the chosen path; fails loudly on anything but a 200 with a body, so a broken run cannot pass as
/// a fast one.
@Sendable func once() async throws {
    if mode == .iterated {
        // HTTPClient with the body read chunk by chunk into a Data, as a manager's data task reads it.
        let response = try await client.execute(HTTPClientRequest(url: url))
        var data = Data()
        for try await chunk in response.body { chunk.withReadableSpan { span in span.withUnsafeBufferPointer { data.append($0) } } }
        guard !data.isEmpty else { exit(1) }
        return
    }
    if mode == .built {
        // The manager's value work without its task: the request built by the verb's serializer, sent by HTTPClient
        // from its URL, the body collected into a Data, the response serialized.
        let request = try manager.request(method: "GET", path: url)
        var wireRequest = HTTPClientRequest(url: request.url.absoluteString, headers: request.headers)
        wireRequest.redirects = .disallow
        let response = try await client.execute(wireRequest)
        let body = try await response.body.collect(upTo: 1 << 16)
        var data = Data()
        body.withReadableSpan { span in span.withUnsafeBufferPointer { data.append($0) } }
        let clientResponse = ClientResponse(url: request.url, statusCode: response.status.code, headers: response.headers,
                                            metrics: response.metrics.snapshot)
        guard manager.responseSerializer.serialize(response: clientResponse, data: data).value != nil else { exit(1) }
        return
    }
    if mode == .hopped {
        // HTTPClient inside a Task of its own, as a manager's driver runs it: the cost of the extra hops alone.
        try await Task {
            let response = try await client.execute(HTTPClientRequest(url: url))
            _ = try await response.body.collect(upTo: 1 << 16)
        }.value
        return
    }
    if mode == .client || mode == .same || mode == .observed {
        var request = HTTPClientRequest(url: url)
        if mode == .same { request.headers = managerFields }
        if mode == .observed { request.observer = { _, _ in } }
        let response = try await client.execute(request)
        let body = try await response.body.collect(upTo: 1 << 16)
        guard response.head.status.code == 200, body.readableBytes > 0 else {
            report("unexpected answer: \(response.head.status.code)")
            exit(1)
        }
        return
    }
    let result = try await manager.get(url)
    guard result.response?.statusCode == 200, result.value != nil else {
        report("unexpected answer: \(String(describing: result.response?.statusCode))")
        exit(1)
    }
}

// Open the connections first, so the timed part measures keep-alive requests only.
try await withThrowingTaskGroup(of: Void.self) { tasks in
    for _ in 0..<connections { tasks.addTask { try await once() } }
    try await tasks.waitForAll()
}

let completed = Atomic<Int>(0)
let cpuBefore = processCPUSeconds()
let start = Deadline.now()
let end = start + .milliseconds(Int(seconds * 1000))
/// Requests handed out so far, when the run is a fixed count.
let claimed = Atomic<Int>(0)
/// Whether another request is due: a fixed count not yet handed out, or time left.
@Sendable func due() -> Bool {
    if let fixedCount { return claimed.wrappingAdd(1, ordering: .relaxed).oldValue < fixedCount }
    return Deadline.now() < end
}
try await withThrowingTaskGroup(of: Void.self) { tasks in
    for _ in 0..<connections {
        tasks.addTask {
            while due() {
                try await once()
                completed.wrappingAdd(1, ordering: .relaxed)
            }
        }
    }
    try await tasks.waitForAll()
}
let elapsed = Double(Deadline.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
let total = completed.load(ordering: .relaxed)
let cpu = processCPUSeconds() - cpuBefore
let rate = Double(total) / elapsed
let cpuPerRequest = total > 0 ? cpu * 1e6 / Double(total) : 0
report(#"{"client":"\#(mode.rawValue)","requests":\#(total),"seconds":\#(elapsed),"requests_per_second":\#(rate),"cpu_us_per_request":\#(cpuPerRequest)}"#)
manager.session.invalidateSession(cancelingTasks: true)
await client.shutdown()
await group.shutdownGracefully()
