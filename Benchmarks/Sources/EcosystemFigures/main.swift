// The cost of WireEcosystem's client bridge, CPU per request, beside the bare client and a bare listener: the same
// keep-alive GET loop as ClientFigures (64 in flight by default), with
//
//   MODE=none      EcosystemFigures PORT [CONNECTIONS] [SECONDS]   # no listener
//   MODE=listener  ...                                              # a listener that counts events (the hook's cost)
//   MODE=noop      ...   # HTTPClientInstrumentation with the default no-op tracer and metrics (the bridge's own work)
//   MODE=counting  ...   # the same with a metrics backend that adds every value to atomics (a backend doing work)
//
// In every mode but none and listener, requests go through execute(_:timeout:instrumentation:) (the span injected).
// Not built by CI (it depends on swift-metrics itself, for the counting backend); BENCHMARKS.md ("Session 17") has the
// commands, run through Benchmarks/client-rounds.sh.
import CoreMetrics
import Glibc
import Synchronization
import Wire
import WireEcosystem

func report(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
}

func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// A metrics backend that does the least real work one can: each value added to an atomic.
final class CountingMetrics: MetricsFactory {
    final class Handler: CounterHandler, FloatingPointCounterHandler, MeterHandler, RecorderHandler, TimerHandler {
        let total = Atomic<Int64>(0)
        func increment(by amount: Int64) { total.wrappingAdd(amount, ordering: .relaxed) }
        func increment(by amount: Double) { total.wrappingAdd(Int64(amount), ordering: .relaxed) }
        func decrement(by amount: Double) { total.wrappingSubtract(Int64(amount), ordering: .relaxed) }
        func set(_ value: Int64) { total.store(value, ordering: .relaxed) }
        func set(_ value: Double) { total.store(Int64(value), ordering: .relaxed) }
        func record(_ value: Int64) { total.wrappingAdd(value, ordering: .relaxed) }
        func record(_ value: Double) { total.wrappingAdd(Int64(value), ordering: .relaxed) }
        func recordNanoseconds(_ duration: Int64) { total.wrappingAdd(duration, ordering: .relaxed) }
        func reset() { total.store(0, ordering: .relaxed) }
    }
    let handler = Handler()
    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { handler }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        handler
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler { handler }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler { handler }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { handler }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}

let arguments = CommandLine.arguments
guard arguments.count >= 2, let port = Int(arguments[1]) else {
    report("usage: MODE=none|listener|noop|counting EcosystemFigures PORT [CONNECTIONS=64] [SECONDS=4]")
    exit(2)
}
let connections = arguments.count > 2 ? Int(arguments[2]) ?? 64 : 64
let seconds = arguments.count > 3 ? Double(arguments[3]) ?? 4 : 4
let mode = getenv("MODE").map { String(cString: $0) } ?? "none"

let group = try EventLoopGroup(loopCount: 1)
var configuration = HTTPClientConfiguration()
configuration.maxConnectionsPerHost = connections
let events = Atomic<Int>(0)
let instrumentation: HTTPClientInstrumentation?
switch mode {
case "none":
    instrumentation = nil
case "listener":
    instrumentation = nil
    configuration.eventListener = { _ in events.wrappingAdd(1, ordering: .relaxed) }
case "noop":
    instrumentation = HTTPClientInstrumentation()
case "counting":
    instrumentation = HTTPClientInstrumentation(metricsFactory: CountingMetrics())
default:
    report("MODE is none, listener, noop or counting")
    exit(2)
}
if let instrumentation { configuration.eventListener = instrumentation.eventListener }
let client = try HTTPClient(configuration: configuration, group: group)
let url = "http://127.0.0.1:\(port)/"

@Sendable func get() async throws {
    let request = HTTPClientRequest(url: url)
    let response =
        if let instrumentation {
            try await client.execute(request, instrumentation: instrumentation)
        } else {
            try await client.execute(request)
        }
    _ = try await response.body.collect(upTo: 1 << 16)
}

// The connections first, so the timed part measures keep-alive requests only.
try await withThrowingTaskGroup(of: Void.self) { tasks in
    for _ in 0..<connections { tasks.addTask { try await get() } }
    try await tasks.waitForAll()
}
let completed = Atomic<Int>(0)
let cpuBefore = processCPUSeconds()
let start = Deadline.now()
let end = start + .milliseconds(Int(seconds * 1000))
try await withThrowingTaskGroup(of: Void.self) { tasks in
    for _ in 0..<connections {
        tasks.addTask {
            while Deadline.now() < end {
                try await get()
                completed.wrappingAdd(1, ordering: .relaxed)
            }
        }
    }
    try await tasks.waitForAll()
}
let elapsed = Double(Deadline.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
let total = completed.load(ordering: .relaxed)
let cpu = processCPUSeconds() - cpuBefore
report(
    #"{"client":"Wire HTTPClient","mode":"\#(mode)","requests":\#(total),"requests_per_second":\#(Double(total) / elapsed),"cpu_us_per_request":\#(total > 0 ? cpu * 1e6 / Double(total) : 0)}"#
)
await client.shutdown()
await group.shutdownGracefully()
