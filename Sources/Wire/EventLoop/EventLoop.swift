import Synchronization

/// Something registered with an event loop's selector: a socket's owner, told when the socket
/// is ready. Called on the loop's thread only.
package protocol Selectable: AnyObject {
    /// The descriptor is ready for what it was registered for, or has hung up or failed.
    func ready(_ event: ReadinessEvent)
    /// The loop is shutting down: close the descriptor and fail pending work.
    func eventLoopIsClosing()
}

/// One thread running an epoll loop: I/O readiness, timers, and work handed over from other threads.
///
/// Everything a connection does happens on the loop that owns it, so a connection needs no
/// locks. Other threads talk to a loop through `execute`, `schedule` and Swift concurrency:
/// the loop is a `SerialExecutor` and a `TaskExecutor`, so an actor or a task can run on it
/// directly and its awaits resume on the loop's thread without a hop per byte.
///
/// ```swift
/// let group = try EventLoopGroup(loopCount: 2)
/// let loop = group.next()
/// loop.execute { print("on the loop") }
/// let timer = loop.schedule(in: .milliseconds(10)) { print("10 ms later") }
/// timer.cancel()
/// ```
///
/// A loop's thread keeps the loop alive: a loop made on its own runs until `shutdown()`. The loops of an
/// `EventLoopGroup` released without `shutdown()` are stopped by the group.
public final class EventLoop: @unchecked Sendable {
    // Safe because `shared` is a Lock and every other mutable member is touched only on the
    // loop's own thread, which each entry point checks with `preconditionInEventLoop()`, except
    // `serialExecutor`, which is set once in `init` before the loop is visible to any other thread.

    private enum Work {
        case closure(@Sendable () -> Void)
        /// A job for the loop as a serial executor (an actor whose executor is the loop), run isolated to it.
        case job(UnownedJob)
        /// A job for the loop as a task's preferred executor: nonisolated code, run without claiming the loop's
        /// serial isolation. Run as isolated to the loop, every nonisolated await of such a task would give up the
        /// thread and queue its continuation on the loop again: a hop through the queue per await, on the same thread.
        case taskJob(UnownedJob)
        /// Work queued as the object that does it (`execute(_:ifClosed:)`).
        case object(any LoopWork)
    }

    private struct SharedState {
        var work: [Work] = []
        /// The doorbell was rung and the loop has not yet taken the work: no need to ring again.
        var wakeupPending = false
        var isShuttingDown = false
        /// The loop has closed its descriptors; new work is dropped.
        var isClosed = false
    }

    private enum LifeCycle { case running, closing, closed }

    /// A name for logs and the thread (`wire-loop-0`).
    public let name: String

    private let shared = Lock(SharedState())
    private let loopThread = Atomic<UInt>(0)
    private let kernelThreadID = Atomic<Int32>(0)
    // The loop thread's alone (made before its thread starts, closed when it ends), and no access is held across a
    // call out: no dynamic exclusivity check on every turn of the loop.
    @exclusivity(unchecked) private var selector: Epoll
    @exclusivity(unchecked) private var readyEvents: [ReadinessEvent] = []
    // Rung by other threads outside `shared`'s lock, closed by the loop only once `ringers` is back to zero after
    // `isClosed` was set: ringing and closing never interleave.
    private var doorbell: EventFD
    /// Threads between counting themselves in under the lock and finishing their ring of the doorbell.
    private let ringers = Atomic<Int>(0)
    // The timer queue and the work queues below opt out of dynamic exclusivity checks, which every turn of the loop
    // paid several times over (a request is a few turns): they are the loop thread's alone, and each access is one
    // append, swap, pop or read; none is held across a call out (a timer's task runs after `popExpired` returned, a
    // queue is swapped out before its work runs).
    @exclusivity(unchecked) private var timers = TimerQueue<() -> Void>()
    /// Work queued from the loop's own thread: no lock, no doorbell.
    @exclusivity(unchecked) private var localWork: [LocalWork] = []
    /// Closures and jobs queued through the public entry points from the loop's own thread.
    @exclusivity(unchecked) private var localJobs: [Work] = []
    /// The queues being run, swapped with the ones above (and with the shared queue) rather than copied: a copy
    /// shares its storage, so emptying the queue for the next round would allocate a new one each time.
    @exclusivity(unchecked) private var runningWork: [LocalWork] = []
    @exclusivity(unchecked) private var runningJobs: [Work] = []
    @exclusivity(unchecked) private var runningBatch: [Work] = []
    /// Resumptions of tasks on other executors queued during this iteration (`handOver`).
    @exclusivity(unchecked) private var handOvers: [any LoopHandOver] = []
    @exclusivity(unchecked) private var registrations = RegistrationTable<any Selectable>()
    /// Loop-confined work waiting on something other than a descriptor (a connect between attempts, a name
    /// lookup), told when the loop closes so that it can fail instead of waiting forever.
    private var closingHandlers: [UInt64: () -> Void] = [:]
    private var nextClosingHandlerID: UInt64 = 0
    /// Read buffers lent to the loop's streams in turn (see `borrowReadBuffer`). Touched once or twice per read,
    /// on the loop's thread only, by calls that call out to nothing: no dynamic exclusivity check needed.
    @exclusivity(unchecked) private var readBuffers = ReadBufferPool(
        maximumCount: EventLoop.pooledReadBuffers, maximumCapacity: EventLoop.pooledReadBufferCapacity)
    private var lifeCycle = LifeCycle.running
    private var thread: PosixThread?
    private let stopped = Lock(false)
    /// The loop's identity as a serial executor (see `LoopSerialExecutor`). Set once in `init`, before the loop is
    /// shared with another thread, and never again.
    private var serialExecutor: LoopSerialExecutor!

    private static let doorbellKey: UInt64 = 0

    /// How many ready descriptors one wait takes. A ready client connection is touched again after its event, by the
    /// task its response resumes and by the request that task writes next; with a thousand connections in flight every
    /// line of that is evicted if the whole batch's reads run first and all of their tasks after. 32 connections'
    /// working sets stay in a core's L2 between the passes: callgrind, simulating a 1 MiB L2, counts 111 → 76 misses a
    /// request on the loop and 138 → 81 on Swift's global executor at 1,000 connections when this goes from 256 to 32
    /// (BENCHMARKS.md, session 39), for one more `epoll_wait` per 32 events.
    static let eventsPerWait = 32

    /// Creates a loop and starts its thread.
    ///
    /// - Throws: `IOError` when the kernel refuses an epoll instance, an eventfd or a thread.
    public init(name: String = "wire-loop") throws(IOError) {
        self.name = name
        selector = try Epoll(maxEventsPerWait: Self.eventsPerWait)
        doorbell = try EventFD()
        try selector.add(doorbell.rawValue, key: Self.doorbellKey, interest: .read)
        serialExecutor = LoopSerialExecutor(loop: self)
        let started = Lock(false)
        thread = try PosixThread(name: name) { [unowned self] in
            self.loopThread.store(UInt(bitPattern: Int(bitPattern: pthreadSelf())), ordering: .releasing)
            self.kernelThreadID.store(Posix.currentThreadID(), ordering: .releasing)
            started.withLock { $0 = true }
            self.run()
        }
        // The thread id must be known before anyone asks `inEventLoop`.
        while !started.withLock({ $0 }) { sched_yield_() }
    }

    /// Whether the caller runs on this loop's thread.
    public var inEventLoop: Bool {
        loopThread.load(ordering: .acquiring) == UInt(bitPattern: Int(bitPattern: pthreadSelf()))
    }

    /// The kernel id of the loop's thread (for `/proc/self/task/<tid>`).
    public var threadID: Int32 { kernelThreadID.load(ordering: .acquiring) }

    /// Traps unless called on the loop's thread.
    public func preconditionInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(inEventLoop, "must be called on \(name)'s thread", file: file, line: line)
    }

    // MARK: Work from any thread

    /// How many read buffers the loop keeps for its streams: enough for a bulk transfer's reads in flight (the
    /// chunks a body's consumer has not yet dropped) plus the one being read into.
    static let pooledReadBuffers = 4
    /// The largest read buffer the loop keeps (a stream's largest read); a larger one is released.
    static let pooledReadBufferCapacity = 256 * 1024

    /// An empty read buffer of at least `minimumCapacity` bytes, for reads on the loop's thread: one the loop
    /// kept whose bytes nobody holds any more, else a new one. Streams give it back with `returnReadBuffer`
    /// whenever it is empty and they go idle, or its bytes are still held (slices handed on), so a busy loop reads
    /// every connection's requests into the same few allocations, a transfer reuses them from start to end, and
    /// an idle connection holds none.
    package func borrowReadBuffer(minimumCapacity: Int) -> ByteBuffer {
        preconditionInEventLoop()
        return readBuffers.take(minimumCapacity: minimumCapacity)
    }

    /// The read buffer pool as it is now, for tests; loop thread only.
    package var readBufferPoolForTesting: ReadBufferPool {
        preconditionInEventLoop()
        return readBuffers
    }

    /// Takes back a read buffer that holds no unread bytes, leaving `buffer` empty. The loop keeps it (even while
    /// a body chunk sliced from it is still held, to reuse once that is dropped) unless it is oversized.
    package func returnReadBuffer(_ buffer: inout ByteBuffer) {
        preconditionInEventLoop()
        readBuffers.give(&buffer)
    }

    /// Runs `task` on the loop's thread, after what is already queued.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        enqueue(.closure(task))
    }

    /// Runs `task` on the loop's thread, or `rejected` on the calling thread at once if the loop has already
    /// closed: for work whose caller waits for it and must hear that it will never run.
    package func execute(_ task: @escaping @Sendable () -> Void, ifClosed rejected: () -> Void) {
        if !enqueue(.closure(task)) { rejected() }
    }

    /// Runs `body` on the loop and returns its result to the awaiting task.
    ///
    /// - Throws: What `body` throws, or `EventLoopClosedError` if the loop has closed and `body` will never run.
    public func submit<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            execute(
                { continuation.resume(with: Result { try body() }) },
                ifClosed: { continuation.resume(throwing: EventLoopClosedError(loopName: name)) })
        }
    }

    /// Runs `work.runOnLoop()` on the loop's thread, after what is already queued, or `rejected` on the calling thread at
    /// once if the loop has already closed: `execute(_:ifClosed:)` for work that another thread hands the loop for every
    /// request, kept in an object that thread has anyway, where a closure would be an allocation each time.
    package func execute(_ work: any LoopWork, ifClosed rejected: () -> Void) {
        if !enqueue(.object(work)) { rejected() }
    }

    /// Runs a loop-confined closure on the loop after the current event is handled; loop
    /// thread only. Used to report outcomes later instead of re-entrantly.
    package func executeSoon(_ task: @escaping () -> Void) {
        preconditionInEventLoop()
        localWork.append(.closure(task))
    }

    /// Runs `work.runDeferredWork()` on the loop after the current event is handled, as `executeSoon` does with a
    /// closure, without allocating one: for work queued once per read on a hot path. Loop thread only.
    package func executeSoon(_ work: any DeferredLoopWork) {
        preconditionInEventLoop()
        localWork.append(.object(work))
    }

    /// Queues the resumption of a task that runs on another executor (Swift's global one), as the object that makes it
    /// (`LoopHandOver.runHandOver()`): at the end of the loop iteration the resumptions queued in it are made together,
    /// from one Swift task on the global executor, so its threads are woken once for the batch. Made one by one from the
    /// loop, each wakes a worker, which on a core shared with the loop preempts it at once: the batch is then handed
    /// over a task at a time, two context switches each. A lone resumption is made at once, on the loop, with no task.
    /// Loop thread only.
    package func handOver(_ resumption: any LoopHandOver) {
        preconditionInEventLoop()
        handOvers.append(resumption)
    }

    private func flushHandOvers() {
        guard !handOvers.isEmpty else { return }
        if handOvers.count == 1 {
            handOvers.removeLast().runHandOver()
            return
        }
        let resumptions = handOvers
        handOvers.removeAll()
        Task.detached { for resumption in resumptions { resumption.runHandOver() } }
    }

    /// Queues work for the loop; returns false, dropping it, when the loop has closed: there is
    /// no thread left to run it.
    @discardableResult
    private func enqueue(_ work: Work) -> Bool {
        if inEventLoop {
            // The loop's own thread (a task resuming on the loop, a handler scheduling more
            // work): no lock, no doorbell; the loop runs it before it next sleeps.
            localJobs.append(work)
            return true
        }
        let ring = shared.withLock { state -> Bool? in
            guard !state.isClosed else { return nil }
            state.work.append(work)
            guard !state.wakeupPending else { return false }
            state.wakeupPending = true
            // Counted in under the lock, where `close()` sets `isClosed`: it waits for this ring before closing the
            // eventfd, so the write never reaches a closed, possibly reused, descriptor.
            ringers.wrappingAdd(1, ordering: .relaxed)
            return true
        }
        guard let ring else { return false }
        if ring {
            // Rung after the lock is released, at most once per loop iteration: the woken loop takes the lock at
            // once, and on a shared core it would otherwise find it held by this thread, preempted by the very
            // wake-up it caused, and spin.
            doorbell.signal()
            ringers.wrappingSubtract(1, ordering: .releasing)
        }
        return true
    }

    // MARK: Timers

    /// Runs `task` on the loop at `deadline`, unless cancelled first.
    @discardableResult
    public func schedule(at deadline: Deadline, _ task: @escaping @Sendable () -> Void) -> Scheduled {
        let handle = Scheduled(loop: self)
        if inEventLoop {
            handle.attach(scheduleOnLoop(at: deadline, task))
        } else {
            execute { handle.attach(self.scheduleOnLoop(at: deadline, task)) }
        }
        return handle
    }

    /// Runs `task` on the loop after `delay`, unless cancelled first.
    @discardableResult
    public func schedule(in delay: Duration, _ task: @escaping @Sendable () -> Void) -> Scheduled {
        schedule(at: .after(delay), task)
    }

    /// Schedules a loop-confined closure; loop thread only. Cheaper than `schedule`: no handle object.
    package func scheduleOnLoop(at deadline: Deadline, _ task: @escaping () -> Void) -> TimerQueue<() -> Void>.ID {
        preconditionInEventLoop()
        return timers.schedule(at: deadline, task)
    }

    /// How many timers are scheduled (cancelled ones are gone at once); loop thread only.
    package var scheduledTimerCount: Int {
        preconditionInEventLoop()
        return timers.count
    }

    /// Cancels a timer made by `scheduleOnLoop`; loop thread only.
    package func cancelOnLoop(_ id: TimerQueue<() -> Void>.ID) {
        preconditionInEventLoop()
        timers.cancel(id)
    }

    // MARK: Registration (loop thread only)

    /// Starts watching `fd` for `interest`; returns the key for later changes.
    ///
    /// `package`: sockets, listeners and the loop's own descriptors register here, and so may a module above Wire
    /// with a descriptor kind of its own (a netlink socket for reachability). Whoever registers owns the descriptor,
    /// deregisters it before closing it, and closes it when `eventLoopIsClosing` is called.
    package func register(_ fd: CInt, interest: Interest, handler: any Selectable) throws(IOError) -> UInt64 {
        preconditionInEventLoop()
        let key = registrations.insert(handler)
        do {
            try selector.add(fd, key: key, interest: interest)
        } catch {
            registrations.remove(key)
            throw error
        }
        return key
    }

    /// Changes what `fd` is watched for.
    package func reregister(_ fd: CInt, key: UInt64, interest: Interest) throws(IOError) {
        preconditionInEventLoop()
        try selector.modify(fd, key: key, interest: interest)
    }

    /// Stops epoll watching `fd` while its registration stays: for a descriptor that has nothing more to report but
    /// is not closed yet (a hung-up socket whose unread bytes wait for their reader, which epoll would otherwise
    /// report on every wait). `deregister` still ends the registration before the close.
    package func stopWatching(_ fd: CInt) {
        preconditionInEventLoop()
        try? selector.remove(fd)
    }

    /// Stops watching `fd`. Call before closing it. Events already fetched for it in the current
    /// batch are dropped, because the key is looked up again for each event.
    package func deregister(_ fd: CInt, key: UInt64) {
        preconditionInEventLoop()
        registrations.remove(key)
        try? selector.remove(fd)
    }

    /// Ends the registration under `key` of a descriptor the caller closes next, with no `EPOLL_CTL_DEL`: closing the
    /// last descriptor of an open file description takes it off the epoll set (epoll(7)), so the call would be one
    /// system call per connection for nothing. Only for a descriptor that no other refers to: one Wire made itself
    /// (socket(2), accept4(2), close-on-exec, never duplicated). A process forked and not yet exec'd holds a copy for
    /// that instant: an event still reported meanwhile finds no registration and is dropped.
    package func deregister(closing key: UInt64) {
        preconditionInEventLoop()
        registrations.remove(key)
    }

    /// Calls `handler` on the loop when it closes, unless cancelled first; loop thread only. For work that waits on
    /// no descriptor of its own (a timer, another thread), which the loop would otherwise drop without a word.
    package func onClosing(_ handler: @escaping () -> Void) -> UInt64 {
        preconditionInEventLoop()
        nextClosingHandlerID += 1
        closingHandlers[nextClosingHandlerID] = handler
        return nextClosingHandlerID
    }

    /// Forgets a handler added by `onClosing`; loop thread only.
    package func cancelOnClosing(_ id: UInt64) {
        preconditionInEventLoop()
        closingHandlers[id] = nil
    }

    /// The number of registered descriptors (for tests and diagnostics).
    package var registrationCount: Int {
        preconditionInEventLoop()
        return registrations.count
    }

    // MARK: The loop

    private func run() {
        while true {
            let timeout = computeTimeout()
            do {
                try selector.wait(timeoutNanoseconds: timeout, into: &readyEvents)
                for event in readyEvents {
                    if event.key == Self.doorbellKey {
                        doorbell.drain()
                    } else if let handler = registrations.handler(for: event.key) {
                        // Looked up per event: a handler closed earlier in this batch is gone.
                        handler.ready(event)
                    }
                }
            } catch {
                // epoll_wait can only fail here through a bug (EBADF/EFAULT trap earlier) or
                // EINVAL; there is nothing useful to retry.
                preconditionFailure("\(name): \(error)")
            }
            runExpiredTimers()
            let stopping = runQueuedWork()
            flushHandOvers()
            if stopping { break }
        }
        close()
    }

    /// Nanoseconds until the next timer; 0 when work is queued; nil (sleep until woken) when
    /// nothing is scheduled, so an idle loop uses no CPU.
    private func computeTimeout() -> UInt64? {
        if !localWork.isEmpty || !localJobs.isEmpty { return 0 }
        // A loop that is shutting down must not block: the doorbell that announced the shutdown
        // may already have been drained in an iteration that still had other work to run.
        let mustNotBlock = shared.withLock { !$0.work.isEmpty || $0.isShuttingDown }
        if mustNotBlock { return 0 }
        guard let next = timers.nextDeadline() else { return nil }
        let now = Posix.monotonicNanoseconds()
        return next.uptimeNanoseconds > now ? next.uptimeNanoseconds - now : 0
    }

    private func runExpiredTimers() {
        guard timers.count > 0 else { return }
        let now = Deadline.now()
        while let task = timers.popExpired(now: now) { task() }
    }

    /// Runs the work queued so far; returns true when the loop should stop (shutdown requested).
    private func runQueuedWork() -> Bool {
        while !localWork.isEmpty || !localJobs.isEmpty {
            swap(&runningWork, &localWork)
            for work in runningWork {
                switch work {
                case .closure(let task): task()
                case .object(let object): object.runDeferredWork()
                }
            }
            runningWork.removeAll(keepingCapacity: true)
            swap(&runningJobs, &localJobs)
            for job in runningJobs { run(job) }
            runningJobs.removeAll(keepingCapacity: true)
        }
        var batch: [Work] = []
        swap(&batch, &runningBatch)
        let shuttingDown = shared.withLock { state -> Bool in
            state.wakeupPending = false
            swap(&batch, &state.work)
            return state.isShuttingDown
        }
        for work in batch { run(work) }
        batch.removeAll(keepingCapacity: true)
        swap(&batch, &runningBatch)
        // Stop once a shutdown is seen and its batch has run: waiting for an empty queue would
        // let a thread that keeps queueing work hold the loop open forever.
        return shuttingDown
    }

    private func run(_ work: Work) {
        switch work {
        case .closure(let task): task()
        case .job(let job): job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
        case .taskJob(let job): job.runSynchronously(on: asUnownedTaskExecutor())
        case .object(let work): work.runOnLoop()
        }
    }

    // MARK: Shutdown

    /// Stops the loop: tells every registered owner to close its descriptor, cancels timers,
    /// runs work queued before the call, closes the loop's own descriptors and joins its thread.
    /// Call from outside the loop; calling twice is harmless.
    public func shutdown() {
        precondition(!inEventLoop, "shutdown() would join the calling thread; call it from outside \(name)")
        let alreadyStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped else { return }
        shared.withLock { state in
            state.isShuttingDown = true
            if !state.isClosed { doorbell.signal() }
        }
        thread?.join()
        thread = nil
    }

    /// Asks the loop to stop and lets its thread finish on its own: for an owner released without `shutdown()`,
    /// which may be running on this very loop and so must not wait for it. Any thread; later calls and a later
    /// `shutdown()` do nothing.
    /// - Returns: Whether the loop was still running.
    @discardableResult
    package func stopWithoutWaiting() -> Bool {
        let alreadyStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped else { return false }
        shared.withLock { state in
            state.isShuttingDown = true
            if !state.isClosed { doorbell.signal() }
        }
        // Only this call or `shutdown()` gets past `stopped`, so nothing joins the thread after this.
        thread?.detach()
        return true
    }

    /// Shuts down without blocking the calling task's thread.
    public func shutdownGracefully() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // Detached: nothing joins it, and a joinable thread that ends unjoined keeps its stack for good.
            let stopper = try? PosixThread(name: "wire-stop", detached: true) {
                self.shutdown()
                continuation.resume()
            }
            if stopper == nil {
                self.shutdown()
                continuation.resume()
            }
        }
    }

    private func close() {
        lifeCycle = .closing
        var queueClosed = false
        while true {
            // Owners close their own descriptors: the loop only asks. Keep asking while closing
            // makes more work (a connection failing a waiter that schedules something). Work waiting
            // on no descriptor hears first, so it fails as abandoned rather than by its socket's close.
            while !closingHandlers.isEmpty || !registrations.isEmpty {
                let handlers = closingHandlers
                closingHandlers.removeAll()
                for (_, handler) in handlers.sorted(by: { $0.key < $1.key }) { handler() }
                for handler in registrations.removeAll() { handler.eventLoopIsClosing() }
            }
            _ = timers.removeAll()
            _ = runQueuedWork()
            // Tasks that work resumed must not be left waiting: no later iteration will make their hand-overs.
            flushHandOvers()
            // That work may have registered, scheduled or queued more: go round until nothing is left.
            if !closingHandlers.isEmpty || !registrations.isEmpty || !localWork.isEmpty || !localJobs.isEmpty { continue }
            if queueClosed { break }
            // Close the queue to other threads (they are told from now on) and run what they queued since the
            // last batch was taken: dropped, it would leave a task awaiting `submit` waiting forever.
            let late = shared.withLock { state -> [Work] in
                state.isClosed = true
                defer { state.work.removeAll() }
                return state.work
            }
            // No thread counts itself in from now on; one that did may still be writing to the doorbell.
            while ringers.load(ordering: .acquiring) > 0 { sched_yield_() }
            doorbell.close()
            queueClosed = true
            localJobs.append(contentsOf: late)
        }
        selector.close()
        lifeCycle = .closed
    }

    deinit {
        // The running thread holds the loop (`run` is a call on it), so the last reference goes only after the
        // loop closed, or with a loop whose thread never started.
        assert(thread == nil || lifeCycle == .closed, "EventLoop \(name) released while its thread runs")
    }
}

// MARK: Swift concurrency

extension EventLoop: SerialExecutor, TaskExecutor {
    /// Runs a Swift concurrency job on the loop's thread: a job of a task that prefers this loop as its task
    /// executor (`withTaskExecutorPreference(loop)`, `Task(executorPreference: loop)`), run as nonisolated code.
    /// From the loop's own thread (a continuation resumed by a read, a task's next step) the job goes on a local
    /// queue, with no lock and no doorbell, and runs in the same loop iteration after what is already queued.
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueue(.taskJob(UnownedJob(job)))
    }

    /// Jobs of actors whose executor is this loop, which run isolated to the loop.
    func enqueueIsolated(_ job: UnownedJob) {
        enqueue(.job(job))
    }

    /// This loop as a serial executor (for an actor's `unownedExecutor`).
    ///
    /// Its identity is a companion object rather than the loop itself, because the runtime hands a serial
    /// executor's jobs and a task executor's jobs to the same `enqueue`: the companion's are run isolated to the
    /// loop, the loop's own (a preferring task's) as nonisolated code. The task executor's identity stays the loop,
    /// which the runtime retains and releases for a task created with it as its preference.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: serialExecutor)
    }

    /// Traps unless the caller runs on the loop, which is what isolation to this executor means.
    public func checkIsolated() {
        preconditionInEventLoop()
    }
}

/// The identity of an event loop as a serial executor: the runtime enqueues the jobs of an actor on the loop here,
/// and they go to the loop's queue to run isolated to it (see `EventLoop.asUnownedSerialExecutor()`).
final class LoopSerialExecutor: SerialExecutor {
    /// Unowned: the loop owns this object, and an actor's executor must outlive the actor (the actor holds the loop).
    unowned let loop: EventLoop

    init(loop: EventLoop) { self.loop = loop }

    func enqueue(_ job: consuming ExecutorJob) {
        loop.enqueueIsolated(UnownedJob(job))
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        loop.preconditionInEventLoop()
    }
}

/// A timer scheduled on an event loop, which can be cancelled from any thread.
public final class Scheduled: Sendable {
    private let loop: EventLoop
    private enum State { case pending, scheduled(TimerQueue<() -> Void>.ID), cancelled }
    private let state = Lock(State.pending)

    init(loop: EventLoop) { self.loop = loop }

    func attach(_ id: TimerQueue<() -> Void>.ID) {
        let cancelledEarly = state.withLock { state -> Bool in
            if case .cancelled = state { return true }
            state = .scheduled(id)
            return false
        }
        if cancelledEarly { loop.cancelOnLoop(id) }
    }

    /// Cancels the timer. If it has not fired yet, it never will.
    ///
    /// Called on the loop's thread, this is exact. Called from another thread, the timer may
    /// already be running; it will not start afterwards.
    public func cancel() {
        let id = state.withLock { state -> TimerQueue<() -> Void>.ID? in
            defer { state = .cancelled }
            if case .scheduled(let id) = state { return id }
            return nil
        }
        guard let id else { return }
        if loop.inEventLoop {
            loop.cancelOnLoop(id)
        } else {
            let loop = self.loop
            loop.execute { loop.cancelOnLoop(id) }
        }
    }
}

/// Loop-confined work an object does when its loop gets to it (`EventLoop.executeSoon(_:)`), queued as the object
/// itself rather than as a closure capturing it.
package protocol DeferredLoopWork: AnyObject {
    /// Called once per `executeSoon`, on the loop's thread.
    func runDeferredWork()
}

/// Work another thread hands the loop as an object (`EventLoop.execute(_:ifClosed:)`) rather than as a closure
/// capturing what the object holds.
package protocol LoopWork: AnyObject, Sendable {
    /// Called once per `execute(_:ifClosed:)`, on the loop's thread.
    func runOnLoop()
}

/// A resumption of a task off the loop, queued as the object that makes it (`EventLoop.handOver(_:)`).
package protocol LoopHandOver: AnyObject, Sendable {
    /// Called once per `handOver(_:)`, at the end of the loop's iteration: on the loop's thread, or in the task that
    /// makes the iteration's batch of resumptions.
    func runHandOver()
}

/// What the loop's own thread queued for itself.
private enum LocalWork {
    case closure(() -> Void)
    case object(any DeferredLoopWork)
}
