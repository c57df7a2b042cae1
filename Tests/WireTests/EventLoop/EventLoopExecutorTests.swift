import Synchronization
import Testing
@_spi(Locking) import Wire

extension IOSuite {
    /// The loop as a Swift executor: where jobs run, in which order, and that none is stranded.
    @Suite struct EventLoopExecutorTests {
        @Test func aPreferringTaskEntersNonisolatedCodeWithoutQueueingAgain() async throws {
            try await withLoop { loop in
                let queuedWorkRanFirst = await Task(executorPreference: loop) { () async -> [Bool] in
                    var outcomes: [Bool] = []
                    for _ in 0..<20 {
                        // Resumed by a job the loop ran: from here on the task runs on the loop's thread.
                        await Task.yield()
                        let ran = Atomic<Bool>(false)
                        loop.execute { ran.store(true, ordering: .relaxed) }
                        // A nonisolated async function starts with a switch to the generic executor. Run as a job
                        // isolated to the loop, the task had to give up the thread there and queue itself behind
                        // the closure above; run as the loop's task job, it goes straight in.
                        await nonisolatedStep()
                        outcomes.append(ran.load(ordering: .relaxed))
                    }
                    return outcomes
                }.value
                #expect(queuedWorkRanFirst == Array(repeating: false, count: 20))
            }
        }

        @Test func workQueuedOnTheLoopKeepsItsOrderBesideWorkFromAnotherThread() async throws {
            try await withLoop { loop in
                try await withTimeout {
                    let log = Lock<[Int]>([])
                    let done = AsyncStreamBox<Void>()
                    let count = 2000
                    let record: @Sendable (Int) -> Void = { value in
                        let total = log.withLock {
                            $0.append(value); return $0.count
                        }
                        if total == 2 * count { done.yield(()) }
                    }
                    // From the loop's own thread (local queue) and from another thread (locked queue, doorbell) at once.
                    loop.execute {
                        for i in 0..<count { loop.execute { record(i) } }
                    }
                    let feeder = try PosixThread(name: "feeder") {
                        for i in 0..<count { loop.execute { record(count + i) } }
                    }
                    try await done.next()
                    feeder.join()
                    let all = log.withLock { $0 }
                    #expect(all.filter { $0 < count } == Array(0..<count))
                    #expect(all.filter { $0 >= count } == Array(count..<(2 * count)))
                }
            }
        }

        @Test func noWakeUpIsLostWhenBothThreadsQueueWork() async throws {
            try await withLoop { loop in
                try await withTimeout {
                    // Each round crosses to the loop (doorbell), queues work there from the loop's thread (no
                    // doorbell) and comes back; a wake-up lost between the two queues would stall a round for good.
                    for round in 0..<5000 {
                        let echoed = try await loop.submit { () -> Int in
                            loop.execute {}
                            return round
                        }
                        #expect(echoed == round)
                        let onLoop = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                            loop.execute { loop.execute { continuation.resume(returning: loop.inEventLoop) } }
                        }
                        #expect(onLoop)
                    }
                }
            }
        }

        @Test func anActorOnTheLoopIsIsolatedInWorkTheLoopRuns() async throws {
            try await withLoop { loop in
                let actor = LoopActor(loop: loop)
                let count = try await loop.submit {
                    // Not a job of the actor: the runtime asks the loop's serial executor, which checks the thread.
                    actor.assumeIsolated { $0.count }
                }
                #expect(count == 0)
                await actor.increment()
                #expect(await actor.allOnLoop)
            }
        }
    }
}

/// A nonisolated async function that does not suspend.
@inline(never)
nonisolated func nonisolatedStep() async {}
