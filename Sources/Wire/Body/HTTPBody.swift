import Synchronization

/// A message body arriving from the network, as an `AsyncSequence` of byte chunks with
/// back-pressure: when the consumer falls behind by more than `highWatermark` bytes, the
/// connection stops reading from its socket, and resumes once the consumer has caught up below
/// `lowWatermark`. Memory stays flat however large the body.
///
/// ```swift
/// for try await chunk in response.body {
///     try file.write(chunk)
/// }
/// // or, with a size limit:
/// let bytes = try await response.body.collect(upTo: 1 << 20)
/// ```
///
/// A body can be iterated once. Cancelling the consuming task, or dropping the body unread,
/// tells the connection, which then closes rather than reuse a half-read stream.
public struct HTTPBody: AsyncSequence, Sendable {
    /// A chunk of body bytes.
    public typealias Element = ByteBuffer

    /// The channel between producer and consumer.
    package let channel: BodyChannel

    /// A body still arriving is held through a `Consumer` too: copies of a body (and its iterator) share it, and when
    /// the last one is released unread the producer hears so at once instead of waiting for a read that never comes
    /// (a client connection would otherwise stay leased, a server's writes blocked). A body that had ended before it
    /// was handed over (a small response read whole with its head) has no producer left to tell: it has no consumer
    /// object to allocate, nor a cancellation to send when it is dropped. Two fields rather than an enum of the two
    /// references: an enum keeps its case in the pointer's spare bits, and LeakSanitizer does not see a reference
    /// through a tagged pointer (a body held at exit was reported as a leaked channel).
    private let consumer: Consumer?

    package init(channel: BodyChannel) {
        self.channel = channel
        consumer = Consumer(channel: channel)
    }

    /// A body whose producer has already ended `channel` (finished or failed): nothing is left to abandon.
    package init(ended channel: BodyChannel) {
        self.channel = channel
        consumer = nil
    }

    /// A complete body already in memory.
    public init(_ bytes: ByteBuffer) {
        self.init(ended: BodyChannel(ended: bytes))
    }

    /// Owns the consumer's claim on a channel; abandons the body when released.
    final class Consumer: Sendable {
        let channel: BodyChannel
        init(channel: BodyChannel) { self.channel = channel }
        deinit { channel.cancel() }
    }

    /// An empty body.
    public static var empty: HTTPBody { HTTPBody(ByteBuffer()) }

    /// Creates the iterator. A body can be iterated only once.
    public func makeAsyncIterator() -> Iterator {
        Iterator(channel: channel, consumer: consumer, isFirst: channel.claimConsumer())
    }

    /// Reads the whole body into one buffer, on the caller's executor.
    ///
    /// - Throws: `HTTPBodyError.tooLarge` once more than `maxBytes` arrive (the rest is not read),
    ///   or the error that ended the stream.
    nonisolated(nonsending) public func collect(upTo maxBytes: Int) async throws -> ByteBuffer {
        var iterator = makeAsyncIterator()
        // A body that has ended (a small response, read whole with its head) is taken in one step.
        if iterator.isFirst, !Task.isCancelled, let whole = try channel.takeAllIfEnded(upTo: maxBytes) {
            return whole
        }
        var collected = ByteBuffer()
        while true {
            // What the channel holds already is taken without an await: a small response's body and end arrive with
            // its head, and each await costs the task a check of its executor on the way back (four per body).
            let next: ByteBuffer?
            if let ready = try iterator.nextIfReady() { next = ready } else { next = try await iterator.next() }
            guard let chunk = next else { return collected }
            guard collected.readableBytes + chunk.readableBytes <= maxBytes else {
                channel.cancel()
                throw HTTPBodyError.tooLarge(limit: maxBytes)
            }
            if collected.readableBytes == 0 { collected = chunk } else { collected.writeBuffer(chunk) }
        }
    }

    /// Reads and discards the rest of the body, so the connection can be reused.
    public func drain() async throws {
        for try await _ in self {}
    }

    /// Yields the body's chunks in order.
    public struct Iterator: AsyncIteratorProtocol {
        let channel: BodyChannel
        /// Holds the body's consumer (if it has one) for as long as the iteration lasts.
        let consumer: Consumer?
        let isFirst: Bool

        /// The next chunk, or nil at the end of the body.
        ///
        /// - Throws: `HTTPBodyError.alreadyConsumed` from a second iterator, `.cancelled` after
        ///   cancellation, or the connection's error (reset, truncated body, timeout).
        nonisolated(nonsending) public mutating func next() async throws -> ByteBuffer? {
            guard isFirst else { throw HTTPBodyError.alreadyConsumed }
            return try await channel.next()
        }

        /// What `next()` would return without waiting: `.some` of a chunk or of nil at the end, or nil when it
        /// would wait (and when the task is cancelled, which `next()` answers).
        package func nextIfReady() throws -> ByteBuffer?? {
            guard isFirst else { throw HTTPBodyError.alreadyConsumed }
            return try channel.nextIfReady()
        }
    }
}

/// Why reading a body failed on the consumer's side.
public enum HTTPBodyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The body is larger than the limit given to `collect(upTo:)`.
    case tooLarge(limit: Int)
    /// The body was already iterated (a body can be read once).
    case alreadyConsumed
    /// The consumer stopped reading (its task was cancelled).
    case cancelled

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .tooLarge(let limit): "body larger than the \(limit)-byte limit"
        case .alreadyConsumed: "the body was already read"
        case .cancelled: "reading the body was cancelled"
        }
    }
}

/// The side of a `BodyChannel` that produces its bytes (a connection reading a message body), as the channel tells
/// it to go on after a pause or to give up. Called without the channel's lock held, from the consumer's thread.
///
/// A protocol rather than two closures: a connection hands a small struct (its loop-bound reference and the
/// message's number), which an existential holds inline, where two closures cost two allocations per message.
protocol BodyProducer: Sendable {
    /// The consumer caught up below the low watermark: produce again.
    func resumeProducing()
    /// The consumer went away (cancelled, or the body dropped unread): the rest will never be read.
    func consumerAbandoned()
}

/// A producer given as two closures, for producers that are not on a hot path.
private struct ClosureBodyProducer: BodyProducer {
    let onDemand: @Sendable () -> Void
    let onCancel: @Sendable () -> Void
    func resumeProducing() { onDemand() }
    func consumerAbandoned() { onCancel() }
}

/// The hand-over point between a connection (the producer, on its loop) and the task reading
/// the body (the consumer, anywhere). Thread-safe through one mutex; the producer is told to
/// pause and resume through the return value of `yield` and the `onDemand` hook.
package final class BodyChannel: Sendable {
    private struct State {
        var chunks = ChunkQueue()
        var bufferedBytes = 0
        var ending: Ending = .open
        /// The consumer waiting for the next chunk. Unchecked (a checked one allocates per wait, once per chunk of a
        /// download): every path that resumes it takes it out of the state under the lock first, so once.
        var waiter: UnsafeContinuation<ByteBuffer?, any Error>?
        var producerPaused = false
        var consumerClaimed = false
        var consumerGone = false
        var producer: (any BodyProducer)?
        var onFirstRead: (@Sendable () -> Void)?
        var finishHooks: [@Sendable () -> Void] = []
        var isOver = false
    }

    private enum Ending {
        case open
        case finished
        case failed(any Error)
    }

    /// Above this many unread bytes the producer is asked to pause.
    let highWatermark: Int
    /// Once the unread bytes fall below this, a paused producer is asked to resume.
    let lowWatermark: Int
    private let state = Lock(State())

    package init(highWatermark: Int = 256 * 1024, lowWatermark: Int = 64 * 1024) {
        self.highWatermark = highWatermark
        self.lowWatermark = lowWatermark
    }

    /// Makes a channel that nothing else holds any more (its reader and producer have let go of it) as a new one, for
    /// the next body: a connection reuses the channel of its last response.
    func resetForReuse() {
        state.withLock { $0 = State() }
    }

    /// A channel that has ended with `bytes` (if any) as its only chunk, with no producer.
    convenience init(ended bytes: ByteBuffer) {
        self.init()
        state.withLock { state in
            if bytes.readableBytes > 0 {
                state.chunks.append(bytes)
                state.bufferedBytes = bytes.readableBytes
            }
            state.ending = .finished
            state.isOver = true
        }
    }

    /// Whether the producer has ended the body (finished or failed) or the consumer has gone: no producer is
    /// needed any more.
    var hasEnded: Bool {
        state.withLock { state in
            if case .open = state.ending { return state.consumerGone }
            return true
        }
    }

    /// Sets the producer's hooks: `onDemand` resumes reading, `onCancel` abandons the body
    /// (the connection must close). Both are called without the lock held.
    func setProducerHooks(onDemand: @escaping @Sendable () -> Void, onCancel: @escaping @Sendable () -> Void) {
        setProducer(ClosureBodyProducer(onDemand: onDemand, onCancel: onCancel))
    }

    /// Sets who produces the body: it is told to resume after a pause, or that the consumer has gone (at once if
    /// it already has).
    func setProducer(_ producer: some BodyProducer) {
        let cancelNow = state.withLock { state -> Bool in
            state.producer = producer
            return state.consumerGone
        }
        if cancelNow { producer.consumerAbandoned() }
    }

    /// The error the body failed with; nil while open, and once finished or abandoned.
    var failure: (any Error)? {
        state.withLock { state in
            if case .failed(let error) = state.ending { return error }
            return nil
        }
    }

    /// Calls `hook` once when the body is over: finished, failed or abandoned (at once if it is).
    func onFinish(_ hook: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.isOver { return true }
            state.finishHooks.append(hook)
            return false
        }
        if runNow { hook() }
    }

    /// Marks the body over and returns the hooks to run (outside the lock).
    private static func takeFinishHooks(_ state: inout State) -> [@Sendable () -> Void] {
        guard !state.isOver else { return [] }
        state.isOver = true
        defer { state.finishHooks = [] }
        return state.finishHooks
    }

    // MARK: Producer

    /// Hands over a chunk. Returns false when the producer should pause until `onDemand`.
    @discardableResult
    package func yield(_ chunk: ByteBuffer) -> Bool {
        let (waiter, keepGoing) = state.withLock { state -> (UnsafeContinuation<ByteBuffer?, any Error>?, Bool) in
            guard case .open = state.ending, !state.consumerGone else { return (nil, true) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, true)
            }
            state.chunks.append(chunk)
            state.bufferedBytes += chunk.readableBytes
            if state.bufferedBytes > highWatermark {
                state.producerPaused = true
                return (nil, false)
            }
            return (nil, true)
        }
        waiter?.resume(returning: chunk)
        return keepGoing
    }

    /// Ends the body normally.
    package func finish() {
        end(.finished)
    }

    /// Ends the body with an error the consumer will see after the chunks already delivered.
    package func fail(_ error: any Error) {
        end(.failed(error))
    }

    private func end(_ ending: Ending) {
        let (waiter, hooks) = state.withLock { state -> (UnsafeContinuation<ByteBuffer?, any Error>?, [@Sendable () -> Void]) in
            guard case .open = state.ending else { return (nil, []) }
            state.ending = ending
            let hooks = Self.takeFinishHooks(&state)
            guard state.chunks.isEmpty else { return (nil, hooks) }
            defer { state.waiter = nil }
            return (state.waiter, hooks)
        }
        for hook in hooks { hook() }
        guard let waiter else { return }
        switch ending {
        case .open: preconditionFailure("ending a body with .open")
        case .finished: waiter.resume(returning: nil)
        case .failed(let error): waiter.resume(throwing: error)
        }
    }

    /// Whether the consumer has stopped reading (cancelled or dropped the body).
    package var isConsumerGone: Bool { state.withLock { $0.consumerGone } }

    // MARK: Consumer

    /// Sets a hook called once, without the lock, when the consumer starts reading: a server
    /// sends `100 Continue` only then (RFC 9110 §10.1.1). Called at once if reading has started.
    func setFirstReadHook(_ onFirstRead: @escaping @Sendable () -> Void) {
        let claimed = state.withLock { state -> Bool in
            if !state.consumerClaimed { state.onFirstRead = onFirstRead }
            return state.consumerClaimed
        }
        if claimed { onFirstRead() }
    }

    /// Marks the body as being read; false if it already was (a second iterator fails its reads
    /// rather than trapping: iterating twice is a user mistake, not a Wire bug).
    func claimConsumer() -> Bool {
        let (isFirst, hook) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            defer {
                state.consumerClaimed = true
                state.onFirstRead = nil
            }
            return (!state.consumerClaimed, state.onFirstRead)
        }
        hook?()
        return isFirst
    }

    // The producer to resume is fetched apart, in the rare case it paused: an optional existential carried in the
    // outcome of every read is copied and destroyed through value witnesses (the producer may be any type).
    private enum Outcome { case chunk(ByteBuffer, resumes: Bool), end, error(any Error), wait }

    /// What the consumer gets now: a buffered chunk, the end, the error, or `.wait` (then `waiter`, if given, is
    /// stored to be resumed by the producer).
    private func take(registering waiter: UnsafeContinuation<ByteBuffer?, any Error>?) -> Outcome {
        state.withLock { state -> Outcome in
            if state.consumerGone { return .error(HTTPBodyError.cancelled) }
            if let chunk = state.chunks.popFirst() {
                state.bufferedBytes -= chunk.readableBytes
                let resumes = state.producerPaused && state.bufferedBytes < lowWatermark
                if resumes { state.producerPaused = false }
                return .chunk(chunk, resumes: resumes)
            }
            switch state.ending {
            case .finished: return .end
            case .failed(let error): return .error(error)
            case .open:
                // Nothing buffered, so the producer is not paused (it resumed when the
                // buffer fell below the low watermark): wait for its next chunk.
                if let waiter { state.waiter = waiter }
                return .wait
            }
        }
    }

    /// Every chunk left, as one buffer, when the producer has finished the body; nil while it is open (or when it
    /// failed: the chunks before the failure are then read one by one, as `next()` hands them out).
    ///
    /// - Throws: `HTTPBodyError.tooLarge` when the chunks come to more than `maxBytes` (the body is then abandoned,
    ///   as `collect` does), `.cancelled` once the consumer has gone.
    func takeAllIfEnded(upTo maxBytes: Int) throws -> ByteBuffer? {
        enum Taken { case whole(ByteBuffer), open, tooLarge, gone }
        let taken = state.withLock { state -> Taken in
            if state.consumerGone { return .gone }
            guard case .finished = state.ending else { return .open }
            guard state.bufferedBytes <= maxBytes else { return .tooLarge }
            var whole = state.chunks.popFirst() ?? ByteBuffer()
            while let chunk = state.chunks.popFirst() { whole.writeBuffer(chunk) }
            state.bufferedBytes = 0
            return .whole(whole)
        }
        switch taken {
        case .whole(let whole): return whole
        case .open: return nil
        case .gone: throw HTTPBodyError.cancelled
        case .tooLarge:
            cancel()
            throw HTTPBodyError.tooLarge(limit: maxBytes)
        }
    }

    /// The next chunk if one is here (`.some(nil)` at the end), without waiting; nil when `next()` would wait, and
    /// for a cancelled task, which `next()` answers (its handler abandons the body at once).
    func nextIfReady() throws -> ByteBuffer?? {
        guard !Task.isCancelled else { return nil }
        switch take(registering: nil) {
        case .chunk(let chunk, let resumes):
            if resumes { resumeProducer() }
            return .some(chunk)
        case .end: return .some(nil)
        case .error(let error): throw error
        case .wait: return nil
        }
    }

    nonisolated(nonsending) func next() async throws -> ByteBuffer? {
        // What is already here is taken without suspending: no continuation, no cancellation handler (a small
        // response's body and end are in the channel when its task first reads it). A cancelled task goes the
        // long way, where the handler abandons the body at once.
        if let ready = try nextIfReady() { return ready }
        return try await withTaskCancellationHandler {
            // The producer's loop may resume the waiter before this task has suspended: the runtime then tells the
            // sanitizer nothing, so the chunk handed over is published by hand once the wait ends, either way.
            var resumed: UnsafeContinuation<ByteBuffer?, any Error>?
            do {
                let chunk = try await withUnsafeThrowingContinuation {
                    (continuation: UnsafeContinuation<ByteBuffer?, any Error>) in
                    resumed = continuation
                    switch take(registering: continuation) {
                    case .chunk(let chunk, let resumes):
                        if resumes { resumeProducer() }
                        continuation.resume(returning: chunk)
                    case .end: continuation.resume(returning: nil)
                    case .error(let error): continuation.resume(throwing: error)
                    case .wait: break
                    }
                }
                if let resumed { ThreadSanitizer.acquire(resumed: resumed) }
                return chunk
            } catch {
                if let resumed { ThreadSanitizer.acquire(resumed: resumed) }
                throw error
            }
        } onCancel: {
            cancel()
        }
    }

    /// Tells the producer to go on after a pause (`take` said so).
    private func resumeProducer() {
        state.withLock { $0.producer }?.resumeProducing()
    }

    /// The consumer gives up: pending and future reads fail, and the producer is told.
    package func cancel() {
        let (waiter, abandons, hooks) = state.withLock {
            state -> (UnsafeContinuation<ByteBuffer?, any Error>?, Bool, [@Sendable () -> Void]) in
            guard !state.consumerGone else { return (nil, false, []) }
            state.consumerGone = true
            state.chunks.removeAll()
            state.bufferedBytes = 0
            let hooks = Self.takeFinishHooks(&state)
            defer { state.waiter = nil }
            if case .open = state.ending { return (state.waiter, true, hooks) }
            return (state.waiter, false, hooks)
        }
        waiter?.resume(throwing: HTTPBodyError.cancelled)
        // Fetched apart, only for a body still open (the producer, set once, stays set): see `Outcome`.
        if abandons { state.withLock { $0.producer }?.consumerAbandoned() }
        for hook in hooks { hook() }
    }
}

/// The chunks a channel holds, oldest first. The first waits in a field of its own: a small body, one chunk, needs
/// no array (one allocation per response saved); a longer run queues in an array kept for reuse.
private struct ChunkQueue {
    private var first: ByteBuffer?
    private var rest: [ByteBuffer] = []
    private var restHead = 0

    var isEmpty: Bool { first == nil }

    mutating func append(_ chunk: ByteBuffer) {
        if first == nil { first = chunk } else { rest.append(chunk) }
    }

    mutating func popFirst() -> ByteBuffer? {
        guard let chunk = first else { return nil }
        if restHead < rest.count {
            first = rest[restHead]
            restHead += 1
            if restHead == rest.count {
                rest.removeAll(keepingCapacity: rest.capacity <= 64)
                restHead = 0
            }
        } else {
            first = nil
        }
        return chunk
    }

    mutating func removeAll() {
        first = nil
        rest.removeAll()
        restHead = 0
    }
}
