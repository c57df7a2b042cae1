import CFloorSyscalls
import Glibc
import Synchronization

// The floor under ClientFigures: C concurrent keep-alive GETs against a server on loopback, with nothing between the
// program and the kernel but the syscalls a client cannot do without, in three shapes. Prints one JSON line in
// ClientFigures' shape (so `scripts/client-vs-wrk.sh` reads it beside wrk and HTTPClient).
//
//   SHAPE=loop|post|direct CrossingFloor PORT [CONNECTIONS=64] [SECONDS=4]     (the arguments ClientFigures takes)
//
//   loop    one thread writes each request, waits in epoll and reads each response: wrk's shape, and HTTPClient's with
//           ON_LOOP=1 (a request loop on the client's own loop)
//   post    one Swift task per connection on the global executor, as HTTPClient's callers on Swift's global executor:
//           the task hands its request to a loop thread (a queue under a lock, and an eventfd doorbell rung once per
//           batch), the loop writes it, reads the response and resumes the task
//   direct  as `post`, but the task writes its request from its own thread; the loop only reads and resumes
//
// The response is read whole by one read (nginx's 13-byte "Hello, World!" answer is about 160 bytes) and not parsed:
// what is left of a client is the crossing between threads. Run it pinned as ClientFigures is:
//   SHAPE=post taskset -c 1 .build/release/CrossingFloor 18391 64 4
// and beside wrk and HTTPClient:
//   CONNECTIONS=64 scripts/client-vs-wrk.sh 5 4 floor=SHAPE=post@.build/release/CrossingFloor global=.build/release/ClientFigures

/// Writes `text` and a newline to standard output.
func report(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
}

/// This process's CPU time (user and system), in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Exits with `message` when a syscall the floor cannot do without fails.
func check(_ ok: Bool, _ message: String) {
    if !ok {
        report("CrossingFloor: \(message): errno \(errno)")
        exit(1)
    }
}

/// A connected, non-blocking TCP socket to 127.0.0.1:`port` with Nagle off.
func connectedSocket(port: UInt16) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    check(fd >= 0, "socket")
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    check(connected == 0, "connect to 127.0.0.1:\(port)")
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    check(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0, "fcntl")
    return fd
}

/// The connections, their epoll set and the loop's doorbell, fixed once made.
final class Connections: Sendable {
    let sockets: [Int32]
    let epoll: Int32
    let doorbell: Int32
    /// The doorbell's key in the epoll set; a socket's key is its index.
    let doorbellKey: UInt64
    static let request = Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)

    init(port: UInt16, count: Int) {
        sockets = (0..<count).map { _ in connectedSocket(port: port) }
        epoll = epoll_create1(0)
        doorbell = eventfd(0, Int32(EFD_NONBLOCK))
        check(epoll >= 0 && doorbell >= 0, "epoll_create1/eventfd")
        doorbellKey = UInt64(count)
        for (index, fd) in sockets.enumerated() { watch(fd, key: UInt64(index)) }
        watch(doorbell, key: doorbellKey)
    }

    private func watch(_ fd: Int32, key: UInt64) {
        var event = epoll_event(events: UInt32(EPOLLIN.rawValue), data: epoll_data_t(u64: key))
        check(epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0, "epoll_ctl")
    }

    /// Writes the request on connection `index` (the kernel takes 35 bytes at once on an idle connection).
    func sendRequest(on index: Int) {
        _ = Self.request.withUnsafeBytes { send(sockets[index], $0.baseAddress, $0.count, 0) }
    }

    /// Reads what connection `index` has; whether a response (some bytes) was there.
    func readResponse(on index: Int, into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        read(sockets[index], buffer.baseAddress, buffer.count) > 0
    }

    /// Waits for readiness; the keys of the ready descriptors in `keys`.
    func wait(into events: UnsafeMutableBufferPointer<epoll_event>, keys: inout [UInt64]) {
        keys.removeAll(keepingCapacity: true)
        let count = epoll_wait(epoll, events.baseAddress, Int32(events.count), -1)
        guard count > 0 else { return }
        for index in 0..<Int(count) { keys.append(events[index].data.u64) }
    }
}

/// What the tasks and the loop thread share in the crossing shapes.
final class Crossing: Sendable {
    struct State {
        /// The task waiting for connection i's response.
        var waiting: [UnsafeContinuation<Void, Never>?]
        /// Connections whose request the loop is to write (`post`).
        var queue: [Int] = []
        /// Whether the doorbell was rung since the loop last took the queue.
        var rung = false
    }

    let state: Mutex<State>
    let completed = Atomic<Int>(0)

    init(connections: Int) {
        state = Mutex(State(waiting: Array(repeating: nil, count: connections)))
    }
}

/// wrk's shape: one thread, every request written as soon as its connection's response was read.
func runOnOneThread(_ connections: Connections, until end: Double) -> Int {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
    let events = UnsafeMutableBufferPointer<epoll_event>.allocate(capacity: 256)
    defer {
        buffer.deallocate()
        events.deallocate()
    }
    var keys: [UInt64] = []
    var completed = 0
    for index in connections.sockets.indices { connections.sendRequest(on: index) }
    while monotonicSeconds() < end {
        connections.wait(into: events, keys: &keys)
        for key in keys where connections.readResponse(on: Int(key), into: buffer) {
            completed += 1
            connections.sendRequest(on: Int(key))
        }
    }
    return completed
}

/// The loop thread of the crossing shapes: reads responses and resumes their tasks (in one batch per wake-up), then
/// writes the requests posted to it.
func runLoop(_ connections: Connections, _ crossing: Crossing) -> Never {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
    let events = UnsafeMutableBufferPointer<epoll_event>.allocate(capacity: 256)
    var keys: [UInt64] = []
    var resumed: [UnsafeContinuation<Void, Never>] = []
    var posted: [Int] = []
    while true {
        connections.wait(into: events, keys: &keys)
        for key in keys {
            if key == connections.doorbellKey {
                var value: UInt64 = 0
                _ = read(connections.doorbell, &value, 8)
            } else if connections.readResponse(on: Int(key), into: buffer),
                let continuation = crossing.state.withLock({ $0.waiting[Int(key)].take() })
            {
                resumed.append(continuation)
            }
        }
        for continuation in resumed { continuation.resume() }
        resumed.removeAll(keepingCapacity: true)
        crossing.state.withLock { state in
            swap(&posted, &state.queue)
            state.rung = false
        }
        for index in posted { connections.sendRequest(on: index) }
        posted.removeAll(keepingCapacity: true)
    }
}

/// One task per connection on the global executor, each request crossing to the loop thread and back.
func runAcrossThreads(_ connections: Connections, until end: Double, tasksWrite: Bool) async -> Int {
    let crossing = Crossing(connections: connections.sockets.count)
    var thread = pthread_t()
    let context = Unmanaged.passRetained(LoopContext(connections, crossing)).toOpaque()
    let started = pthread_create(
        &thread, nil,
        { context in
            let loop = Unmanaged<LoopContext>.fromOpaque(context!).takeRetainedValue()
            runLoop(loop.connections, loop.crossing)
        }, context)
    check(started == 0, "pthread_create")
    await withTaskGroup(of: Void.self) { group in
        for index in connections.sockets.indices {
            group.addTask {
                while monotonicSeconds() < end {
                    await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                        if tasksWrite {
                            crossing.state.withLock { $0.waiting[index] = continuation }
                            connections.sendRequest(on: index)
                            return
                        }
                        let ring = crossing.state.withLock { state -> Bool in
                            state.waiting[index] = continuation
                            state.queue.append(index)
                            defer { state.rung = true }
                            return !state.rung
                        }
                        if ring {
                            var one: UInt64 = 1
                            _ = write(connections.doorbell, &one, 8)
                        }
                    }
                    crossing.completed.wrappingAdd(1, ordering: .relaxed)
                }
            }
        }
    }
    // The loop thread is left waiting: the process exits next.
    return crossing.completed.load(ordering: .relaxed)
}

/// What the loop thread is started with.
final class LoopContext: Sendable {
    let connections: Connections
    let crossing: Crossing
    init(_ connections: Connections, _ crossing: Crossing) {
        self.connections = connections
        self.crossing = crossing
    }
}

let arguments = CommandLine.arguments
let mode = getenv("SHAPE").map { String(cString: $0) } ?? "post"
guard arguments.count >= 2, ["loop", "post", "direct"].contains(mode), let port = UInt16(arguments[1]) else {
    report("usage: SHAPE=loop|post|direct CrossingFloor PORT [CONNECTIONS=64] [SECONDS=4]")
    exit(2)
}
let count = arguments.count > 2 ? Int(arguments[2]) ?? 64 : 64
let seconds = arguments.count > 3 ? Double(arguments[3]) ?? 4 : 4
let connections = Connections(port: port, count: count)
let cpuBefore = processCPUSeconds()
let start = monotonicSeconds()
let end = start + seconds
let completed =
    mode == "loop"
    ? runOnOneThread(connections, until: end)
    : await runAcrossThreads(connections, until: end, tasksWrite: mode == "direct")
let elapsed = monotonicSeconds() - start
let cpu = processCPUSeconds() - cpuBefore
report(
    #"{"client":"CrossingFloor \#(mode)","requests":\#(completed),"seconds":\#(elapsed),"requests_per_second":\#(Double(completed) / elapsed),"cpu_us_per_request":\#(completed > 0 ? cpu * 1e6 / Double(completed) : 0)}"#
)
exit(0)
