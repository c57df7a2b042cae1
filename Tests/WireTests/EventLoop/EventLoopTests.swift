import Foundation
import Glibc
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireTestSupport

extension IOSuite {
    @Suite(.exclusiveIO) struct EventLoopTests {
        @Test func timersFireInDeadlineOrderAndCancelledOnesNever() async throws {
            try await withLoop { loop in
                try await withTimeout {
                    let fired = Lock<[Int]>([])
                    let all = AsyncStreamBox<Void>()
                    let start = Deadline.now()
                    // Scheduled out of order; 3 and 5 cancelled; 7 and 8 share a deadline.
                    let delays = [6: 60, 1: 10, 4: 40, 3: 30, 2: 20, 5: 50, 7: 70, 8: 70]
                    // Scheduled and cancelled in one block on the loop: however late it runs, no timer fires in between.
                    try await loop.submit {
                        var handles: [Int: Scheduled] = [:]
                        for key in [6, 1, 4, 3, 2, 5, 7, 8] {
                            handles[key] = loop.schedule(at: start + .milliseconds(delays[key]!)) {
                                let count = fired.withLock {
                                    $0.append(key); return $0.count
                                }
                                if count == 6 { all.yield(()) }
                            }
                        }
                        handles[3]!.cancel()
                        handles[5]!.cancel()
                    }
                    try await all.next()
                    // A cancelled timer at 50 ms would have fired before 60 ms; wait past 80 ms to be sure.
                    let settled = AsyncStreamBox<Void>()
                    loop.schedule(at: start + .milliseconds(90)) { settled.yield(()) }
                    try await settled.next()
                    #expect(fired.withLock { $0 } == [1, 2, 4, 6, 7, 8])
                }
            }
        }

        /// Hand-overs queued in one loop iteration run together, in order, off the loop (one task on the global
        /// executor); a lone one runs at once on the loop, with no task.
        @Test func handOversOfOneIterationRunTogetherOffTheLoop() async throws {
            try await withLoop { loop in
                try await withTimeout {
                    let ran = Lock<[(Int, Bool)]>([])
                    let done = AsyncStreamBox<Void>()
                    loop.execute {
                        for index in 0..<3 {
                            loop.handOver(
                                ClosureLoopObject {
                                    let count = ran.withLock {
                                        $0.append((index, loop.inEventLoop)); return $0.count
                                    }
                                    if count == 3 { done.yield(()) }
                                })
                        }
                        // Nothing runs before the iteration ends.
                        #expect(ran.withLock { $0.isEmpty })
                    }
                    try await done.next()
                    #expect(ran.withLock { $0.map(\.0) } == [0, 1, 2])
                    #expect(ran.withLock { $0.allSatisfy { !$0.1 } }, "a batch runs off the loop")
                    let lone = AsyncStreamBox<Bool>()
                    loop.execute { loop.handOver(ClosureLoopObject { lone.yield(loop.inEventLoop) }) }
                    #expect(try await lone.next() == true, "a lone hand-over runs on the loop")
                }
            }
        }

        /// Work queued as an object runs on the loop's thread, once per `execute`, in order with closures; a closed
        /// loop refuses it on the caller's thread.
        @Test func workQueuedAsAnObjectRunsOnTheLoopOrIsRefusedOnceClosed() async throws {
            let loop = try EventLoop(name: "object-work")
            let ran = Lock<[String]>([])
            let done = AsyncStreamBox<Void>()
            let work = ClosureLoopObject {
                ran.withLock { $0.append(loop.inEventLoop ? "object on loop" : "object off loop") }
            }
            var refused = false
            loop.execute(work, ifClosed: { refused = true })
            loop.execute { ran.withLock { $0.append("closure") } }
            loop.execute(work, ifClosed: { refused = true })
            loop.execute { done.yield(()) }
            try await withTimeout { try await done.next() }
            #expect(ran.withLock { $0 } == ["object on loop", "closure", "object on loop"])
            #expect(!refused)
            await loop.shutdownGracefully()
            loop.execute(work, ifClosed: { refused = true })
            #expect(refused, "a closed loop refuses the work at once")
            #expect(ran.withLock { $0.count } == 3)
        }

        @Test func timerFiresNoEarlierThanItsDeadline() async throws {
            try await withLoop { loop in
                try await withTimeout {
                    let lateness = Lock<[Int64]>([])
                    let done = AsyncStreamBox<Void>()
                    for index in 1...20 {
                        let deadline = Deadline.after(.milliseconds(index * 3))
                        loop.schedule(at: deadline) {
                            let late = (Deadline.now() - deadline).nanoseconds
                            if lateness.withLock({
                                $0.append(late); return $0.count
                            }) == 20 {
                                done.yield(())
                            }
                        }
                    }
                    try await done.next()
                    let values = lateness.withLock { $0 }
                    #expect(values.allSatisfy { $0 >= 0 }, "a timer fired early: \(values)")
                }
            }
        }

        @Test func workFromEightThreadsRunsExactlyOnce() async throws {
            try await withLoop { loop in
                try await withTimeout(seconds: 30) {
                    let perThread = 10_000
                    let runs = Lock<[Int]>(Array(repeating: 0, count: 8 * perThread))
                    let outsideLoop = Lock(0)
                    let finished = AsyncStreamBox<Void>()
                    let remaining = Lock(8 * perThread)
                    let threads = try (0..<8).map { thread in
                        try PosixThread(name: "submitter-\(thread)") {
                            for index in 0..<perThread {
                                let id = thread * perThread + index
                                loop.execute {
                                    if !loop.inEventLoop { outsideLoop.withLock { $0 += 1 } }
                                    runs.withLock { $0[id] += 1 }
                                    if remaining.withLock({
                                        $0 -= 1; return $0
                                    }) == 0 {
                                        finished.yield(())
                                    }
                                }
                            }
                        }
                    }
                    for thread in threads { thread.join() }
                    try await finished.next()
                    #expect(runs.withLock { $0.allSatisfy { $0 == 1 } })
                    #expect(outsideLoop.withLock { $0 } == 0)
                }
            }
        }

        @Test func idleLoopUsesNoCPU() async throws {
            try await withLoop { loop in
                // A loop with a far timer and a registered doorbell, doing nothing else.
                let far = loop.schedule(in: .seconds(3600)) {}
                // The window opens once the loop has run everything before it (a sanitizer slows that work).
                try await loop.submit {}
                let ticksBefore = try threadCPUTicks(loop.threadID)
                // Measure over one second of wall time (a measurement window, not synchronisation).
                try await Task.sleep(for: .seconds(1))
                let ticksAfter = try threadCPUTicks(loop.threadID)
                far.cancel()
                // Clock ticks are 10 ms; an idle loop should not accumulate even one.
                #expect(ticksAfter - ticksBefore <= 1, "idle loop used \(ticksAfter - ticksBefore) ticks in 1 s")
            }
        }

        /// `shutdownGracefully()` stops the loop from a thread of its own, which nothing joins: made joinable, each one
        /// kept its stack (8 MiB of address space) for the rest of the process, and ThreadSanitizer reported a thread
        /// leak per graceful shutdown. Detached, a finished stopper's stack is freed or reused by the next thread.
        @Test func gracefulShutdownsLeaveNoThreadBehind() async throws {
            func virtualKiB() throws -> Int {
                let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
                let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmSize:") })
                return try #require(Int(line.filter(\.isNumber)))
            }
            try await withLoop { _ in }
            let before = try virtualKiB()
            for _ in 0..<32 {
                let loop = try EventLoop(name: "stop-test")
                await loop.shutdownGracefully()
            }
            // 32 stacks left behind would be 256 MiB; the stack cache and the heap's arenas keep it far below half.
            let growth = try virtualKiB() - before
            #expect(growth < 128 * 1024, "address space grew by \(growth) KiB over 32 graceful shutdowns")
        }

        @Test func tasksPreferringTheLoopRunOnItsThread() async throws {
            try await withLoop { loop in
                let onLoop = await Task(executorPreference: loop) {
                    var all = loop.inEventLoop
                    for _ in 0..<100 {
                        await Task.yield()
                        all = all && loop.inEventLoop
                    }
                    return all
                }.value
                #expect(onLoop)
            }
        }

        @Test func actorsOnTheLoopExecutorRunOnItsThread() async throws {
            try await withLoop { loop in
                let counter = LoopActor(loop: loop)
                for _ in 0..<100 { await counter.increment() }
                #expect(await counter.count == 100)
                #expect(await counter.allOnLoop)
            }
        }

        @Test func shutdownCompletesWhileOtherThreadsKeepQueueingWork() async throws {
            // Regression: a shutdown noticed in an iteration that also ran work once left the
            // loop asleep forever, its doorbell already drained.
            for _ in 0..<20 {
                let loop = try EventLoop(name: "busy-shutdown")
                let keepGoing = Atomic<Bool>(true)
                let feeder = try PosixThread(name: "feeder") {
                    while keepGoing.load(ordering: .relaxed) { loop.execute {} }
                }
                try await withTimeout(seconds: 10) { await loop.shutdownGracefully() }
                keepGoing.store(false, ordering: .relaxed)
                feeder.join()
            }
        }

        @Test func shutdownClosesRegisteredDescriptors() async throws {
            let before = openDescriptors()
            let loop = try EventLoop(name: "shutdown-test")
            _ = try await loop.submit { () throws -> SocketAddress in
                let listener = try SocketListener(
                    bindingTo: try SocketAddress(ipAddress: "127.0.0.1", port: 0), on: loop, onAccept: { _ in })
                return listener.localAddress
            }
            #expect(!before.newlyOpened().isEmpty)
            await loop.shutdownGracefully()
            #expect(before.newlyOpened() == [])
        }
    }
}

/// An actor whose executor is an event loop.
actor LoopActor {
    let loop: EventLoop
    var count = 0
    var allOnLoop = true
    init(loop: EventLoop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    func increment() {
        count += 1
        allOnLoop = allOnLoop && loop.inEventLoop
    }
}

/// Loop work and a hand-over as an object that runs a closure (`EventLoop.execute(_:ifClosed:)`, `handOver(_:)`).
final class ClosureLoopObject: LoopWork, LoopHandOver {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    func runOnLoop() { body() }
    func runHandOver() { body() }
}
