import FoundationEssentials
import Synchronization
@_spi(Locking) import Wire

/// What a task's transfer ended with, before the download move and serialization.
struct TransferOutcome: Sendable {
    var response: ClientResponse?
    var data: Data?
    /// A download's temporary file, closed.
    var temporaryFile: String?
    var error: ClientError?
    /// The last exchange's record in Wire, complete once its body ended; nil for a response that did not come from
    /// the network (a cache's).
    var exchangeMetrics: HTTPClientMetrics?
    /// The last exchange's metrics once the transfer ended, else the response's (a cache's has none). After a
    /// transfer without error the exchange's body ended and Wire's record no longer changes: it is read when asked.
    /// After an error the connection may still write to it, so it is copied now. A function, not a property: each
    /// call may copy Wire's record.
    func finalMetrics() -> MetricsBox? {
        guard let exchangeMetrics else { return response?.metricsBox }
        return error == nil ? MetricsBox(finished: exchangeMetrics) : MetricsBox(exchangeMetrics.snapshot)
    }
    /// The download task a data task became (`ResponseDisposition.becomeDownload`): the one that completes.
    var replacement: (task: SessionTask, delegate: TaskDelegate)?
}

extension TransferOutcome {
    /// What the chain gave: the response and its received body.
    init(_ answer: StageResponse) {
        self.init(response: answer.response, exchangeMetrics: answer.exchangeMetrics)
        guard let body = answer.body.received else { return }
        data = body.data
        temporaryFile = body.temporaryFile
        error = body.error
        if let moved = body.replacement as? TaskDelegate { replacement = (moved.task, moved) }
    }
}

extension SessionManager {
    /// A task was resumed (its `didResume` event is queued); the first time, it queues for a slot, in resume order,
    /// and its transfer starts (a caller-driven task's caller runs it: `drive`).
    func taskDidResume(_ task: SessionTask, first: Bool) {
        if first {
            slots.enqueue(task.taskIdentifier)
            if !task.drivenByCaller { startDriver(for: task) }
        }
    }

    /// Starts the Swift task that runs `task`'s transfer and completes it. It holds the manager until then.
    func startDriver(for task: SessionTask) {
        // An unstructured task inherits no task-executor preference: the driver, and the serialization it runs, are
        // on Swift's global executor even when the caller prefers an event loop.
        let driver = Task { _ = await self.drive(task) }
        task.attach(driver: driver)
    }

    /// Runs the transfer under the resource timeout (from the first resume, waiting for a slot included) and the
    /// idle timeout, then completes the task: in its driver, or in the caller's Swift task (the `async` forms).
    /// - Returns: What the task completed with; nil when it had completed already.
    @inline(__always) nonisolated(nonsending) func drive(_ task: SessionTask) async -> CompletionInfo? {
        guard let delegate = state.withLock({ $0.delegates[task.taskIdentifier] }) else { return nil }
        let outcome: TransferOutcome
        // One entry for both timeouts; it holds the task strongly (a weak reference would give every task a side
        // table) and is removed below, before the task completes.
        let idle = delegate.idle
        let watched = timeouts.add(task, resourceTimeout: resourceTimeout, idleTimeout: idleTimeout(for: task))
        // Without a task limit a slot is free at once, and `startTransfer` finds a cancellation in the same lock as
        // it installs the idle timer.
        if !slots.isLimited || task.cancelReason == nil, await slots.wait(task.taskIdentifier, for: task),
            task.startTransfer(idle: idle)
        {
            idle.start()
            outcome = await transfer(task, delegate)
            // The task lets go of its idle timer when it is marked completed (`complete`).
            timeouts.remove(watched)
        } else {
            timeouts.remove(watched)
            outcome = TransferOutcome(error: task.cancelReason)
        }
        slots.release(task.taskIdentifier)
        let (completing, completingDelegate) = outcome.replacement ?? (task, delegate)
        // `cancel()` may have cancelled this Swift task: the completion still runs whole, since nothing in it observes
        // cancellation (its waits are continuations and pool work).
        // Moved, not copied: a copy and its destruction go through the outcome's value witnesses.
        return await complete(completing, completingDelegate, consume outcome)
    }

    /// The idle timeout of `task`: its request's `timeoutInterval`, else the session's.
    func idleTimeout(for task: SessionTask) -> TimeoutWatch.Timeout {
        task.originalRequest.timeoutInterval.map(TimeoutWatch.Timeout.init) ?? defaultIdleTimeout
    }

    /// The idle timer a new task's transfer runs under.
    func idleTimer(for task: SessionTask) -> IdleTimer {
        IdleTimer(task: task, timeout: idleTimeout(for: task), watch: timeouts)
    }

    /// Runs the task's transfer chain (`stages(for:)`) from its current request and receives the body.
    @inline(__always) nonisolated(nonsending) private func transfer(_ task: SessionTask, _ delegate: TaskDelegate) async
        -> TransferOutcome
    {
        guard delegate.generation != nil else {
            return TransferOutcome(
                error: ClientError(
                    .sessionInvalidated, failingURL: task.originalRequest.url,
                    failureReason: "no session"))
        }
        do {
            let answer: StageResponse
            switch stages(for: task) {
            case .tail(let tail):
                // The session's own stages only (the common case): composed, inlined here, in this frame.
                answer = try await tail.proceed(task.currentRequest, in: delegate)
            case .chain(let stages):
                let chain = TransferChain(request: task.currentRequest, stages: stages, transfer: delegate)
                answer = try await chain.proceed(chain.request)
            }
            // A body a stage received already (a retry's, the cache's) is unpacked; Wire's is received straight into
            // the outcome, not wrapped for the chain first.
            if case .received = answer.body.content { return TransferOutcome(answer) }
            return await receiveOutcome(answer, for: delegate)
        } catch {
            // The last head of this attempt, and its timings, stay with the failure (a redirect loop, a refused
            // challenge): the completion reports them.
            let (response, metrics) = delegate.records.withLock { ($0.response, $0.metrics) }
            return TransferOutcome(response: response, error: error, exchangeMetrics: metrics)
        }
    }

    /// One hop through Wire, up to its response head (the chain's last stage): the client for the request's URL, the
    /// Wire request, the exchange; a suspended task sends nothing until resumed, and a cancelled one ends here.
    @inline(__always) nonisolated(nonsending) func exchange(
        _ request: ClientRequest, fields: HTTPHeaders, for delegate: TaskDelegate
    ) async throws(ClientError) -> StageResponse {
        let task = delegate.task
        let target = wireURL(of: request)
        // Per hop: a redirect may lead to a host under another security policy.
        guard let generation = delegate.generation else {
            throw ClientError(.sessionInvalidated, failingURL: request.url, failureReason: "no session")
        }
        let client: HTTPClient
        do throws(HTTPClientError) {
            let secure: Bool
            switch target {
            case .success(let url): secure = url.value.isTLS
            case .failure: secure = request.url.scheme?.lowercased() == "https"
            }
            client = try generation.client(secure: secure) {
                delegate.records.withLock { records in
                    if let trust = records.trust { return trust }
                    let trust = sessionTrust
                    records.trust = trust
                    return trust
                }
            }
        } catch {
            throw .transport(error, url: request.url)
        }
        // A task suspended before its request (or the next hop's) went out sends nothing until it is resumed.
        if let reason = await task.checkpoint() { throw reason }
        let sentBody = request.body == nil ? delegate.records.withLock { $0.sentBody } : false
        // No driver to cancel a caller-driven task's hop: `cancel()` (a timeout, invalidation) aborts it through
        // its handle. Given to the Wire request as it is made: a request changed afterwards is copied for the call.
        let abort = task.drivenByCaller ? HTTPClientAbortHandle() : nil
        let wireRequest = try await makeWireRequest(
            request, fields: fields, to: target.get().value, for: task, delegate: delegate,
            idle: delegate.idle, resetsUploadTotal: sentBody, abort: abort)
        if request.body != nil { delegate.records.withLock { $0.sentBody = true } }
        if let abort {
            guard task.setAbort(abort) else {
                throw task.cancelReason
                    ?? ClientError(
                        .cancelled, failingURL: request.url,
                        failureReason: "the task was cancelled")
            }
        }
        delegate.idle.touch()
        let response: HTTPClientResponse
        do {
            response = try await client.execute(wireRequest)
        } catch {
            throw task.cancelReason(after: error) ?? .transport(error, url: request.url)
        }
        delegate.idle.touch()
        let head = ClientResponse(url: request.url, statusCode: response.status.code, headers: response.headers)
        let answer = StageResponse(
            response: head, body: ResponseBody(.wire(response.body)), request: request,
            exchangeMetrics: response.metrics)
        // A head that arrived while the task was suspended is told (redirect and response hooks) after resume.
        if let reason = await task.checkpoint() {
            delegate.record(head, metrics: response.metrics)
            throw reason
        }
        return answer
    }

    /// Receives the final response's body as the task does (`receiveOutcome`), for a stage that needs it whole (the
    /// retry and cache stages, through `TransferContext.receive`): the response comes back with its body received.
    nonisolated(nonsending) func receive(_ answer: StageResponse, for delegate: TaskDelegate) async -> StageResponse {
        let outcome = await receiveOutcome(answer, for: delegate)
        var received = answer
        received.body = ResponseBody(
            received: ReceivedBody(
                data: outcome.data, temporaryFile: outcome.temporaryFile,
                error: outcome.error, replacement: outcome.replacement?.delegate))
        return received
    }

    /// Receives the final response's body as the task does: the response is the task's from now on, a data task's
    /// response hook may cancel it or make it a download, and the body goes into memory or a temporary file.
    /// - Returns: What the task completes with.
    @inline(__always) nonisolated(nonsending) private func receiveOutcome(
        _ answer: StageResponse, for delegate: TaskDelegate
    ) async -> TransferOutcome {
        let task = delegate.task
        var outcome = TransferOutcome(response: answer.response, exchangeMetrics: answer.exchangeMetrics)
        task.setResponse(answer.response)
        let hooks = self.hooks
        if task.kind != .download, let decide = hooks.dataTaskDidReceiveResponse {
            if await dispose(
                answer.body, answer.response, decide, of: task, delegate,
                idle: delegate.idle, hooks: hooks, &outcome)
            {
                return outcome
            }
        }
        await receiveBody(
            answer.body, to: answer.request, of: task, delegate, idle: delegate.idle, hooks: hooks,
            into: &outcome)
        return outcome
    }

    /// `dataTaskDidReceiveResponse`'s answer: allow (false: receive the body as usual), cancel, or become a download
    /// task that receives the body (true: the transfer ends with `outcome`).
    @inline(never)  // Its own async frame, allocated only when called (`transfer`).
    private func dispose(
        _ body: ResponseBody, _ response: ClientResponse,
        _ decide: @escaping @Sendable (SessionTask, ClientResponse) -> ResponseDisposition,
        of task: SessionTask, _ delegate: TaskDelegate, idle: IdleTimer,
        hooks: SessionHooksSnapshot, _ outcome: inout TransferOutcome
    ) async -> Bool {
        switch await askCaller(idle, { decide(task, response) }) {
        case .allow:
            return false
        case .cancel:
            task.cancel()
            outcome.error = task.cancelReason
            return true
        case .becomeDownload:
            // The hand-over needs a running task: a `suspend()` landing between the wait and the hand-over makes it
            // refuse, and the task waits again (only a cancellation ends it here).
            var becameDownload: (task: SessionTask, delegate: TaskDelegate)?
            while becameDownload == nil {
                if let reason = await task.checkpoint() {
                    outcome.error = reason
                    return true
                }
                becameDownload = becomeDownload(task, delegate, idle: idle)
            }
            guard let download = becameDownload else { return true }
            outcome.replacement = download
            if let became = hooks.dataTaskDidBecomeDownloadTask {
                await askCaller(idle) { became(task, download.task) }
            }
            await receiveBody(
                body, to: download.task.currentRequest, of: download.task, download.delegate, idle: idle,
                hooks: hooks, into: &outcome)
            return true
        }
    }

    /// Runs a hook on the delegate queue with the idle timeout held: time spent waiting for the caller is not silence
    /// of the peer.
    func askCaller<T: Sendable>(_ idle: IdleTimer, _ body: @escaping @Sendable () -> T) async -> T {
        idle.beginHold()
        let answer = await askDelegateQueue(body)
        idle.endHold()
        return answer
    }

    /// Turns a data task into a download task that receives the rest of the exchange (NSURLSession's
    /// `becomeDownload`): a new task with the next identifier, running, with the data task's request, response and
    /// completion handler (its delegate moves over, as in AF); the data task ends without a completion of its own.
    /// - Returns: The download task and its delegate; nil when the data task was cancelled or suspended meanwhile
    ///   (then the identifier taken for the download stays unused: identifiers are never reused).
    private func becomeDownload(
        _ task: SessionTask, _ delegate: TaskDelegate,
        idle: IdleTimer
    ) -> (task: SessionTask, delegate: TaskDelegate)? {
        let identifier = nextIdentifier.wrappingAdd(1, ordering: .relaxed).oldValue
        let download = SessionTask(
            identifier: identifier, kind: .download, request: task.originalRequest, manager: self,
            drivenByCaller: task.drivenByCaller)
        guard task.handOver(to: download, idle: idle) else { return nil }
        let moved = TaskDelegate(
            task: download, manager: self, generation: delegate.generation,
            uploadProgress: delegate.uploadProgress, downloadProgress: delegate.downloadProgress,
            completion: delegate.completion, destination: nil, replacesExistingFile: false,
            drivenByCaller: delegate.drivenByCaller, idle: idle)
        state.withLock { state in
            state.delegates.remove(task.taskIdentifier)
            state.delegates.insert(moved)
        }
        return (download, moved)
    }

    /// `request`'s URL as Wire takes it: parsed already (a path `HTTPSessionManager` remembers), or parsed now;
    /// in its box, read in place (each copy of the value retains its strings). WireClient fetches `http` and `https`
    /// URLs with a host (`.badURL` otherwise); any other URL Wire refuses fails as Wire's error would.
    private func wireURL(of request: ClientRequest) -> Result<Boxed<HTTPURL>, ClientError> {
        let url: Boxed<HTTPURL>
        if let known = request.wireURL {
            url = known
        } else {
            do throws(HTTPClientError) {
                url = Boxed(try HTTPURL(request.url.absoluteString))
            } catch {
                let scheme = request.url.scheme?.lowercased()
                guard scheme == "http" || scheme == "https", request.url.host != nil else {
                    return .failure(notFetched(request.url))
                }
                return .failure(.transport(error, url: request.url))
            }
        }
        guard url.value.scheme == "http" || url.value.scheme == "https" else {
            return .failure(notFetched(request.url))
        }
        return .success(url)
    }

    /// The error for a URL that is not `http` or `https`, or has no host.
    private func notFetched(_ url: URL) -> ClientError {
        ClientError(.badURL, failingURL: url, failureReason: "WireClient fetches http and https URLs only")
    }

    /// The Wire request for one hop to `target` (`request.url` parsed) with `fields` (the request's as the chain left
    /// them, and the session's), the body gated by suspension, Wire's redirects off, and an observer that turns Wire's
    /// events into upload progress and idle-timer activity.
    @inline(__always)  // A request without a body is built without a frame of its own (`sendBody` has one).
    nonisolated(nonsending) private func makeWireRequest(
        _ request: ClientRequest, fields: HTTPHeaders, to target: HTTPURL, for task: SessionTask,
        delegate: TaskDelegate, idle: IdleTimer,
        resetsUploadTotal: Bool, abort: HTTPClientAbortHandle?
    ) async throws(ClientError) -> HTTPClientRequest {
        // Before any socket, for the first request and every redirect hop alike.
        try configuration.transportSecurity.check(request.url)
        var wireRequest = HTTPClientRequest(url: target, method: HTTPMethod(request.method), headers: fields)
        wireRequest.abortHandle = abort
        wireRequest.redirects = .disallow
        wireRequest.connectionRequirements = configuration.connectionRequirements(for: request)
        if request.shouldUsePipelining == false { wireRequest.allowsPipelining = false }
        if let proxy = request.proxyAnswer { wireRequest.proxy = .proxy(proxy) }
        guard let body = request.body else {
            // No byte of a body is sent (no upload progress: the total stays unknown, as each attempt starts it, or
            // goes back to unknown after a hop with a body), and the exchange touches the idle timer when the head is
            // handed over: no observer.
            if resetsUploadTotal { task.setUploadTotal(-1) }
            return wireRequest
        }
        try await sendBody(body, of: request, in: &wireRequest, for: task, delegate: delegate, idle: idle)
        return wireRequest
    }

    /// Gives `wireRequest` the request's body, gated by suspension, and an observer that turns Wire's events into
    /// upload progress and idle-timer activity.
    @inline(never)  // Its own async frame, allocated only for a request with a body.
    nonisolated(nonsending) private func sendBody(
        _ body: RequestBody, of request: ClientRequest, in wireRequest: inout HTTPClientRequest,
        for task: SessionTask, delegate: TaskDelegate, idle: IdleTimer
    ) async throws(ClientError) {
        let declared = wireRequest.headers.first(name: "Content-Length").flatMap { Int64($0) }
        let gated = try await GatedBody.make(body, declaredLength: declared, task: task, url: request.url)
        wireRequest.body = gated.body
        task.setUploadTotal(gated.length ?? declared ?? -1)
        let hooks = self.hooks
        let uploadProgress = delegate.uploadProgress
        if hooks.taskDidSendBodyData != nil || uploadProgress != nil {
            task.setUploadReporter { [weak self, weak task] delta, progress in
                guard let self, let task else { return }
                self.onDelegateQueue {
                    hooks.taskDidSendBodyData?(task, delta, progress.completedUnitCount, progress.totalUnitCount)
                    uploadProgress?(progress)
                }
            }
        }
        // Wire may keep the observer past the exchange: it holds neither the task nor the idle timer (which holds
        // the task) strongly.
        let touch = idle.weakTouch
        wireRequest.observer = { [weak task] event, _ in
            guard let task else { return }
            switch event {
            case .bodyBytesSent(let total, _):
                touch()
                task.bodySent(total: Int64(total))
            case .responseHead:
                touch()
            case .redirect, .retry, .bytesWritten, .bytesRead:
                break
            }
        }
    }

    /// Reads the body, chunk by chunk, only while the task is not suspended: a suspended task stops pulling, so
    /// Wire's body stream fills to its high watermark and the connection stops reading its socket. A data or upload
    /// task buffers it; a download writes it to a temporary file (`receiveDownload`).
    @inline(__always) nonisolated(nonsending) private func receiveBody(
        _ body: ResponseBody, to request: ClientRequest, of task: SessionTask,
        _ delegate: TaskDelegate, idle: IdleTimer, hooks: SessionHooksSnapshot,
        into outcome: inout TransferOutcome
    ) async {
        if task.kind == .download {
            await receiveDownload(body, to: request, of: task, delegate, idle: idle, hooks: hooks, into: &outcome)
            return
        }
        let url = request.url
        var data = Data()
        var iterator = ResponseBodyReader(body)
        let limit = configuration.maximumBufferedResponseSize
        while true {
            guard let chunk = await nextChunk(&iterator, of: task, idle: idle, url: url, into: &outcome) else { break }
            guard data.count + chunk.readableBytes <= limit else {
                // Dropping the iterator abandons the body: Wire closes the connection instead of reading on.
                outcome.error = ClientError(
                    .responseTooLarge, failingURL: url, response: outcome.response,
                    failureReason:
                        "the body is larger than maximumBufferedResponseSize (\(limit) bytes); use a download task")
                break
            }
            data.append(chunk)
            if hooks.dataTaskDidReceiveData != nil || delegate.downloadProgress != nil {
                // No callback while suspended (the next read waits at its own checkpoint).
                await task.waitWhileSuspended()
                await reportReceived(chunk, task.downloadProgress, of: task, delegate, hooks: hooks, idle: idle)
            }
        }
        outcome.data = data
    }

    /// The body's next chunk, read once the task is not suspended and counted in its progress; nil at the end
    /// of the body, or when the task was cancelled or the body failed (then `outcome.error` says which).
    @inline(__always)  // Called per chunk: no frame of its own.
    nonisolated(nonsending) private func nextChunk(
        _ iterator: inout ResponseBodyReader, of task: SessionTask, idle: IdleTimer, url: URL,
        into outcome: inout TransferOutcome
    ) async -> ByteBuffer? {
        if let reason = await task.checkpoint() {
            outcome.error = reason
            return nil
        }
        let chunk: ByteBuffer?
        do {
            if let ready = try iterator.nextIfReady() { chunk = ready } else { chunk = try await iterator.next() }
        } catch {
            outcome.error = task.cancelReason(after: error) ?? .body(error, url: url)
            return nil
        }
        guard let chunk else { return nil }
        idle.touch()
        task.bodyReceived(iterator.takeWireByteCount())
        return chunk
    }

    /// A data task's chunk and progress to `dataTaskDidReceiveData` and the task's progress block, on the delegate
    /// queue.
    @inline(never)  // Its own async frame, allocated only when a hook is set (`receiveBody`).
    private func reportReceived(
        _ chunk: ByteBuffer, _ progress: TaskProgress, of task: SessionTask, _ delegate: TaskDelegate,
        hooks: SessionHooksSnapshot, idle: IdleTimer
    ) async {
        // The chunk as a `Data` of its own (a hook may keep it), made only when a hook will see it.
        var copy = Data()
        if hooks.dataTaskDidReceiveData != nil { copy.append(chunk) }
        let piece = copy
        await askCaller(idle) {
            // An empty piece only carries wire bytes for progress (a gzip trailer).
            if !piece.isEmpty { hooks.dataTaskDidReceiveData?(task, piece) }
            delegate.downloadProgress?(progress)
        }
    }

    /// `receiveBody` for a download task: the body goes to a temporary file, and each write is told to
    /// `downloadTaskDidWriteData` and the task's progress block.
    @inline(never)  // Its own async frame, allocated only for downloads (`receiveBody`).
    private func receiveDownload(
        _ body: ResponseBody, to request: ClientRequest, of task: SessionTask, _ delegate: TaskDelegate,
        idle: IdleTimer, hooks: SessionHooksSnapshot, into outcome: inout TransferOutcome
    ) async {
        let url = request.url
        let file: AsyncFile
        do {
            file = try await openDownloadFile(for: task, url: url)
            outcome.temporaryFile = file.path
        } catch {
            outcome.error = error
            return
        }
        var iterator = ResponseBodyReader(body)
        while true {
            guard let chunk = await nextChunk(&iterator, of: task, idle: idle, url: url, into: &outcome) else { break }
            do {
                try await file.write(chunk)
            } catch {
                outcome.error = ClientError(
                    .cannotWriteToFile, failingURL: url, underlying: error,
                    failureReason: "cannot write the download to \(file.path): \(error)")
                break
            }
            await task.waitWhileSuspended()
            if hooks.downloadTaskDidWriteData != nil || delegate.downloadProgress != nil {
                let count = Int64(chunk.readableBytes)
                let progress = task.downloadProgress
                await askCaller(idle) {
                    hooks.downloadTaskDidWriteData?(task, count, progress.completedUnitCount, progress.totalUnitCount)
                    delegate.downloadProgress?(progress)
                }
            }
        }
        try? await file.close()
    }
}
