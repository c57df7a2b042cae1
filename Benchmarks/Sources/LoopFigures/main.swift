import Foundation
import Glibc
import Synchronization
import Wire

// Measures the event loop's basic figures: how long a cross-thread `execute` takes to run on a
// sleeping loop, how late timers fire, and how much CPU an idle loop uses.

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

func describe(_ name: String, microseconds values: [Double]) {
    let sorted = values.sorted()
    print(String(format: "%@: median %.1f µs, p90 %.1f µs, p99 %.1f µs, max %.1f µs (n=%d)",
                 name, percentile(sorted, 0.5), percentile(sorted, 0.9), percentile(sorted, 0.99), sorted.last!, sorted.count))
}

func cpuTicks(thread: Int32) -> Int {
    guard let file = fopen("/proc/self/task/\(thread)/stat", "r") else { return -1 }
    defer { fclose(file) }
    var buffer = [CChar](repeating: 0, count: 1024)
    guard fgets(&buffer, CInt(buffer.count), file) != nil else { return -1 }
    let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let fields = text[text.index(after: text.lastIndex(of: ")")!)...].split(separator: " ")
    return Int(fields[11])! + Int(fields[12])!
}

func sleepMilliseconds(_ milliseconds: Int) {
    var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1 { request = remaining }
}

let loop = try EventLoop(name: "figures")

// 1. Wake-up latency: the loop is asleep in epoll_wait; another thread calls execute.
let samples = 2000
let wakeups = Mutex<[Double]>([])
for _ in 0..<samples {
    let done = Mutex(false)
    let sent = Deadline.now()
    loop.execute {
        let latency = Double(Deadline.now().uptimeNanoseconds - sent.uptimeNanoseconds) / 1000
        wakeups.withLock { $0.append(latency) }
        done.withLock { $0 = true }
    }
    while !done.withLock({ $0 }) { sched_yield() }
    sleepMilliseconds(1)  // let the loop go back to sleep so each sample is a real wake-up
}
describe("cross-thread wake-up (execute → run on a sleeping loop)", microseconds: wakeups.withLock { $0 })

// 2. Timer lateness: 1,000 timers at 1–20 ms.
let lateness = Mutex<[Double]>([])
let timerCount = 1000
for index in 0..<timerCount {
    let deadline = Deadline.after(.microseconds(1000 + (index * 19_000) / timerCount))
    loop.schedule(at: deadline) {
        let late = (Double(Deadline.now().uptimeNanoseconds) - Double(deadline.uptimeNanoseconds)) / 1000
        lateness.withLock { $0.append(late) }
    }
}
while lateness.withLock({ $0.count }) < timerCount { sleepMilliseconds(5) }
describe("timer lateness (fired − deadline)", microseconds: lateness.withLock { $0 })

// 3. Idle CPU: a loop with one far timer, over 3 seconds.
loop.schedule(in: .seconds(3600)) {}
let before = cpuTicks(thread: loop.threadID)
sleepMilliseconds(3000)
let after = cpuTicks(thread: loop.threadID)
let hz = Double(sysconf(CInt(_SC_CLK_TCK)))
let idleTicks = after - before
let idlePercent = Double(idleTicks) / hz / 3 * 100
print(String(format: "idle loop CPU: %d ticks in 3 s = %.2f%% of a core", idleTicks, idlePercent))

loop.shutdown()
