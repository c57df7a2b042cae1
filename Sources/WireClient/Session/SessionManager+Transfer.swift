import FoundationEssentials
import Synchronization
import Wire

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
    nonisolated(nonsending) func drive(_ task: SessionTask) async -> CompletionInfo? {
        guard let delegate = state.withLock({ $0.delegates[task.taskIdentifier] }) else { return nil }
        var outcome = TransferOutcome()
        // One entry for both timeouts; it holds the task strongly (a weak reference would give every task a side
        // table) and is removed below, before the task completes.
        let idleTimeout = task.originalRequest.timeoutInterval.map(TimeoutWatch.Timeout.init) ?? defaultIdleTimeout
        let watched = timeouts.add(task, resourceTimeout: resourceTimeout, idleTimeout: idleTimeout)
        let idle = IdleTimer(task: task, timeout: idleTimeout, watch: timeouts)
        // Without a task limit a slot is free at once, and `startTransfer` finds a cancellation in the same lock as
        // it installs the idle timer.
        if !slots.isLimited || task.cancelReason == nil, await slots.wait(task.taskIdentifier, for: task),
           task.startTransfer(idle: idle) {
            idle.start()
            outcome = await attempts(task, delegate, idle: idle)
            // The task lets go of its idle timer when it is marked completed (`complete`).
            timeouts.remove(watched)
        } else {
            timeouts.remove(watched)
            outcome.error = task.cancelReason
        }
        slots.release(task.taskIdentifier)
        let (completing, completingDelegate) = outcome.replacement ?? (task, delegate)
        // `cancel()` may have cancelled this Swift task: the completion still runs whole, since nothing in it observes
        // cancellation (its waits are continuations and pool work).
        return await complete(completing, completingDelegate, outcome)
    }

    /// Runs the transfer once when no interceptor is set; otherwise attempts it until one is kept
    /// (`retryingAttempts`). Kept apart so that the common case's async frame stays small: the task allocator of a
    /// transfer's Swift task then holds it without another slab.
    @inline(__always)  // No frame of its own for the common case (`transfer` has one).
    nonisolated(nonsending) private func attempts(_ task: SessionTask, _ delegate: TaskDelegate, idle: IdleTimer) async -> TransferOutcome {
        let manager = state.withLock { $0.interceptor }
        guard manager != nil || task.originalRequest.interceptor != nil else {
            return await transfer(task, delegate, idle: idle)
        }
        let chain = InterceptorChain.combining(manager: manager, request: task.originalRequest.interceptor)
        return await retryingAttempts(task, delegate, idle: idle, chain: chain)
    }

    /// Runs attempts of the transfer until one is kept: each sends the original request through the adapters, and a
    /// failed one (a transport error, or a status the response serializer would refuse) goes to the retriers.
    @inline(never)  // Its own async frame, allocated only when called (`transfer`).
    private func retryingAttempts(_ task: SessionTask, _ delegate: TaskDelegate, idle: IdleTimer,
                                  chain: InterceptorChain) async -> TransferOutcome {
        var attempt = 0
        while true {
            if let reason = task.cancelReason { return TransferOutcome(error: reason) }
            do {
                idle.beginHold()
                let adapted = try await chain.adapt(task.originalRequest)
                idle.endHold()
                task.beginAttempt(with: adapted)
            } catch {
                idle.endHold()
                let failure = error as? ClientError
                    ?? ClientError(.requestSerializationFailed, failingURL: task.originalRequest.url, underlying: error,
                                   failureReason: "an adapter refused the request")
                return TransferOutcome(error: task.cancelReason(after: error) ?? failure)
            }
            let outcome = await transfer(task, delegate, idle: idle)
            guard outcome.replacement == nil, task.cancelReason == nil, let failure = retryableFailure(of: outcome) else {
                return outcome
            }
            attempt += 1
            idle.beginHold()
            let decision = await chain.retry(task.currentRequest, attempt: attempt, response: outcome.response, error: failure)
            let delay: Duration
            switch decision {
            case .doNotRetry:
                idle.endHold()
                return outcome
            case .doNotRetryWithError(let error):
                idle.endHold()
                var replaced = outcome
                replaced.error = error
                return replaced
            case .retry:
                delay = .zero
            case .retryAfter(let wait):
                delay = wait
            }
            if let file = outcome.temporaryFile { try? await AsyncFile.remove(file) }
            if delay > .zero { await task.pause(for: delay) }
            idle.endHold()
        }
    }

    /// What a retrier is asked about: the attempt's error, or, for a response the serializer's status validation
    /// would refuse, `.unacceptableStatusCode` carrying it; nil for an attempt that succeeded.
    private func retryableFailure(of outcome: TransferOutcome) -> ClientError? {
        if let error = outcome.error { return error }
        guard let response = outcome.response else { return nil }
        let acceptable = responseSerializer.acceptableStatusCodes
        guard let acceptable, !acceptable.contains(response.statusCode) else { return nil }
        return ClientError(.unacceptableStatusCode(response.statusCode), failingURL: response.url, response: response,
                           responseData: outcome.data, failureReason: "status \(response.statusCode)")
    }

    /// Sends the request, follows redirects, and receives the final response's body.
    ///
    /// The work of a hop lives in `exchange` (up to the response head) and `afterHead` (the decisions the head calls
    /// for, then the body), and what only some hops need in functions of their own: each async function's frame holds
    /// every value any of its paths keeps across a suspension, so one large function here made every transfer's Swift
    /// task allocate (and free) several kilobytes of frame from the heap.
    nonisolated(nonsending) private func transfer(_ task: SessionTask, _ delegate: TaskDelegate, idle: IdleTimer) async -> TransferOutcome {
        guard let generation = delegate.generation else {
            return TransferOutcome(error: ClientError(.sessionInvalidated, failingURL: task.originalRequest.url,
                                                      failureReason: "no session"))
        }
        // Resume data that cannot be used fails here, before any connection (only a download may resume).
        if task.kind == .download, let failure = await checkResumption(of: task) {
            return TransferOutcome(error: failure)
        }
        var request = task.currentRequest
        var hop = HopState()
        if configuration.urlCache != nil {
            switch await startCache(for: task, request) {
            case .answered(let answer): return answer
            case .send(let attempt, let sent): (hop.cacheAttempt, request) = (attempt, sent)
            }
        }
        while true {
            switch await exchange(request, of: task, delegate, generation: generation, idle: idle, &hop) {
            case .failure(let error):
                hop.outcome.error = error
                return hop.outcome
            case .success(let response):
                guard let next = await afterHead(response, to: request, of: task, delegate, idle: idle, &hop) else {
                    return hop.outcome
                }
                request = next
            }
        }
    }

    /// What a transfer carries from hop to hop.
    struct HopState {
        /// What the transfer ends with so far (the last hop's response once its head arrived).
        var outcome = TransferOutcome()
        /// Redirects followed.
        var redirects = 0
        var challenges = ChallengeLedger()
        /// The cache consulted before the first hop, finished after the body; nil without a cache.
        var cacheAttempt: CacheAttempt?
        /// The trust the session's TLS layer enforces, read once per transfer when a hop first needs it.
        var trust: SessionTrust?
        /// Whether a hop sent a body (and so set an upload total that a hop without one must reset).
        var sentBody = false
    }

    /// One hop up to its response head: the client for the request's URL, the Wire request, the exchange, the
    /// cookies; a suspended task sends nothing until resumed, and a cancelled one ends here.
    @inline(never)  // Its own async frame: `transfer` keeps only what goes from hop to hop.
    nonisolated(nonsending) private func exchange(_ request: ClientRequest, of task: SessionTask, _ delegate: TaskDelegate,
                          generation: SessionGeneration, idle: IdleTimer,
                          _ hop: inout HopState) async -> Result<HTTPClientResponse, ClientError> {
        let target = wireURL(of: request)
        // Per hop: a redirect may lead to a host under another security policy.
        let client: HTTPClient
        do throws(HTTPClientError) {
            let secure = (try? target.get())?.isTLS ?? (request.url.scheme?.lowercased() == "https")
            client = try generation.client(secure: secure) {
                let trust = hop.trust ?? sessionTrust
                hop.trust = trust
                return trust
            }
        } catch {
            return .failure(.transport(error, url: request.url))
        }
        // A task suspended before its request (or the next hop's) went out sends nothing until it is resumed.
        if let reason = await task.checkpoint() { return .failure(reason) }
        var wireRequest: HTTPClientRequest
        do {
            wireRequest = try await makeWireRequest(request, to: target.get(), for: task, delegate: delegate, idle: idle,
                                                    resetsUploadTotal: hop.sentBody)
            if request.body != nil { hop.sentBody = true }
        } catch {
            return .failure(error)
        }
        if task.drivenByCaller {
            // No driver to cancel: `cancel()` (a timeout, invalidation) aborts the hop through its handle.
            let abort = HTTPClientAbortHandle()
            wireRequest.abortHandle = abort
            guard task.setAbort(abort) else {
                return .failure(task.cancelReason ?? ClientError(.cancelled, failingURL: request.url,
                                                                 failureReason: "the task was cancelled"))
            }
        }
        idle.touch()
        let response: HTTPClientResponse
        do {
            response = try await client.execute(wireRequest)
        } catch {
            return .failure(task.cancelReason(after: error) ?? .transport(error, url: request.url))
        }
        idle.touch()
        storeCookies(from: response.headers, for: request)
        // A head that arrived while the task was suspended is told (redirect and response hooks) after resume.
        if let reason = await task.checkpoint() { return .failure(reason) }
        return .success(response)
    }

    /// A hop's head arrived: a redirect to follow, a challenge to answer or a resumption to restart returns the next
    /// request; otherwise the response hook decides and the body is received. Nil: the transfer ends with
    /// `hop.outcome`.
    @inline(never)  // Its own async frame: `transfer` keeps only what goes from hop to hop.
    nonisolated(nonsending) private func afterHead(_ response: HTTPClientResponse, to request: ClientRequest, of task: SessionTask,
                           _ delegate: TaskDelegate, idle: IdleTimer, _ hop: inout HopState) async -> ClientRequest? {
        let clientResponse = hop.cacheAttempt?.revalidated(by: response, url: request.url)
            ?? ClientResponse(url: request.url, statusCode: response.status.code, headers: response.headers)
        hop.outcome.response = clientResponse
        hop.outcome.exchangeMetrics = response.metrics
        switch RedirectRules.next(after: request, status: response.status.code, location: response.headers.first(name: "Location")) {
        case .deliver:
            break
        case .fail(let error):
            hop.outcome.error = error
            return nil
        case .follow(let proposed, let keepsBody):
            hop.redirects += 1
            guard hop.redirects <= configuration.maximumRedirects else {
                hop.outcome.error = ClientError(.tooManyRedirects, failingURL: request.url, response: clientResponse,
                                                failureReason: "more than \(configuration.maximumRedirects) redirects")
                return nil
            }
            if let next = await redirect(to: proposed, keepsBody: keepsBody, after: clientResponse, of: task, idle: idle) {
                return await moveOn(to: next, after: response, of: task)
            }
        }
        // Read once for the rest of the hop (after the redirect hooks, which may have set others).
        let hooks = self.hooks
        if hooks.taskDidReceiveAuthenticationChallenge != nil,
           let answer = await answerChallenge(clientResponse, to: request, of: task, idle: idle, ledger: &hop.challenges) {
            switch answer {
            case .replay(let next):
                return await moveOn(to: next, after: response, of: task)
            case .cancel:
                task.cancel()
                hop.outcome.error = task.cancelReason
                return nil
            }
        }
        task.setResponse(clientResponse)
        if task.kind == .download, let fresh = await resolveResumption(of: task, delegate, response: clientResponse, idle: idle) {
            return await moveOn(to: fresh, after: response, of: task)
        }
        if task.kind != .download, let decide = hooks.dataTaskDidReceiveResponse {
            if await dispose(response.body, clientResponse, decide, url: request.url, of: task, delegate, idle: idle,
                             hooks: hooks, &hop.outcome) {
                return nil
            }
        }
        await receiveBody(response.body, to: request, of: task, delegate, idle: idle, hooks: hooks, into: &hop.outcome)
        if hop.cacheAttempt != nil {
            await finishCache(hop.cacheAttempt, request, task, idle: idle, &hop.outcome)
        }
        return nil
    }

    /// The transfer goes on with `next` instead of `response`'s body (a redirect's, a challenge's, or a whole file
    /// where a range was asked for): up to 64 KiB of it is read so the connection can be reused; a larger one is
    /// abandoned, which closes the connection.
    private func moveOn(to next: ClientRequest, after response: HTTPClientResponse, of task: SessionTask) async -> ClientRequest {
        _ = try? await response.body.collect(upTo: 64 * 1024)
        task.setCurrentRequest(next)
        return next
    }

    /// The redirect hooks: a new body stream when the redirect keeps the body, then whether (and where) to follow.
    /// - Returns: The request to send next; nil delivers the redirect response itself.
    @inline(never)  // Its own async frame, allocated only when called (`transfer`).
    private func redirect(to proposed: ClientRequest, keepsBody: Bool, after response: ClientResponse,
                          of task: SessionTask, idle: IdleTimer) async -> ClientRequest? {
        var proposed = proposed
        let hooks = self.hooks
        if keepsBody, let needBody = hooks.taskNeedNewBodyStream, let body = await askCaller(idle, { needBody(task) }) {
            proposed.body = body
        }
        guard let willRedirect = hooks.taskWillPerformHTTPRedirection else { return proposed }
        let offer = proposed
        return await askCaller(idle) { willRedirect(task, response, offer) }
    }

    /// `dataTaskDidReceiveResponse`'s answer: allow (false: receive the body as usual), cancel, or become a download
    /// task that receives the body (true: the transfer ends with `outcome`).
    @inline(never)  // Its own async frame, allocated only when called (`transfer`).
    private func dispose(_ body: HTTPBody, _ response: ClientResponse,
                         _ decide: @escaping @Sendable (SessionTask, ClientResponse) -> ResponseDisposition, url: URL,
                         of task: SessionTask, _ delegate: TaskDelegate, idle: IdleTimer,
                         hooks: SessionHooksSnapshot, _ outcome: inout TransferOutcome) async -> Bool {
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
            await receiveBody(body, to: download.task.currentRequest, of: download.task, download.delegate, idle: idle,
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
    private func becomeDownload(_ task: SessionTask, _ delegate: TaskDelegate,
                                idle: IdleTimer) -> (task: SessionTask, delegate: TaskDelegate)? {
        let identifier = nextIdentifier.wrappingAdd(1, ordering: .relaxed).oldValue
        let download = SessionTask(identifier: identifier, kind: .download, request: task.originalRequest, manager: self,
                                   drivenByCaller: task.drivenByCaller)
        guard task.handOver(to: download, idle: idle) else { return nil }
        let moved = TaskDelegate(task: download, generation: delegate.generation, uploadProgress: delegate.uploadProgress,
                                 downloadProgress: delegate.downloadProgress, completion: delegate.completion,
                                 destination: nil, replacesExistingFile: false,
                                 drivenByCaller: delegate.drivenByCaller)
        state.withLock { state in
            state.delegates.remove(task.taskIdentifier)
            state.delegates.insert(moved)
        }
        return (download, moved)
    }

    /// `request`'s URL as Wire takes it: parsed already (a path `HTTPSessionManager` remembers), or parsed now.
    /// WireClient fetches `http` and `https` URLs with a host (`.badURL` otherwise); any other URL Wire refuses
    /// fails as Wire's error would.
    private func wireURL(of request: ClientRequest) -> Result<HTTPURL, ClientError> {
        let url: HTTPURL
        if let known = request.wireURL {
            url = known.value
        } else {
            do throws(HTTPClientError) {
                url = try HTTPURL(request.url.absoluteString)
            } catch {
                let scheme = request.url.scheme?.lowercased()
                guard scheme == "http" || scheme == "https", request.url.host != nil else { return .failure(notFetched(request.url)) }
                return .failure(.transport(error, url: request.url))
            }
        }
        guard url.scheme == "http" || url.scheme == "https" else { return .failure(notFetched(request.url)) }
        return .success(url)
    }

    /// The error for a URL that is not `http` or `https`, or has no host.
    private func notFetched(_ url: URL) -> ClientError {
        ClientError(.badURL, failingURL: url, failureReason: "WireClient fetches http and https URLs only")
    }

    /// The Wire request for one hop to `target` (`request.url` parsed): additional headers filled in, the body gated
    /// by suspension, Wire's redirects off, and an observer that turns Wire's events into upload progress and
    /// idle-timer activity.
    @inline(__always)  // A request without a body is built without a frame of its own (`sendBody` has one).
    nonisolated(nonsending) private func makeWireRequest(_ request: ClientRequest, to target: HTTPURL, for task: SessionTask,
                                                         delegate: TaskDelegate, idle: IdleTimer,
                                                         resetsUploadTotal: Bool) async throws(ClientError) -> HTTPClientRequest {
        // Before any socket, for the first request and every redirect hop alike.
        try configuration.transportSecurity.check(request.url)
        var headers = sessionFields.fields(over: request.headers)
        addCookies(to: &headers, for: request)
        var wireRequest = HTTPClientRequest(url: target, method: HTTPMethod(request.method), headers: headers)
        wireRequest.redirects = .disallow
        wireRequest.connectionRequirements = configuration.connectionRequirements(for: request)
        if request.shouldUsePipelining == false { wireRequest.allowsPipelining = false }
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
    nonisolated(nonsending) private func sendBody(_ body: RequestBody, of request: ClientRequest, in wireRequest: inout HTTPClientRequest,
                                                  for task: SessionTask, delegate: TaskDelegate, idle: IdleTimer) async throws(ClientError) {
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
            case .redirect, .retry:
                break
            }
        }
    }

    /// Reads the body, chunk by chunk, only while the task is not suspended: a suspended task stops pulling, so
    /// Wire's body stream fills to its high watermark and the connection stops reading its socket. A data or upload
    /// task buffers it; a download writes it to a temporary file (`receiveDownload`).
    nonisolated(nonsending) private func receiveBody(_ body: HTTPBody, to request: ClientRequest, of task: SessionTask,
                                                     _ delegate: TaskDelegate, idle: IdleTimer, hooks: SessionHooksSnapshot,
                                                     into outcome: inout TransferOutcome) async {
        if task.kind == .download {
            await receiveDownload(body, to: request, of: task, delegate, idle: idle, hooks: hooks, into: &outcome)
            return
        }
        let url = request.url
        var data = Data()
        var iterator = bodyReader(body, response: outcome.response, request: request)
        let limit = configuration.maximumBufferedResponseSize
        while true {
            guard let chunk = await nextChunk(&iterator, of: task, idle: idle, url: url, into: &outcome) else { break }
            guard data.count + chunk.readableBytes <= limit else {
                // Dropping the iterator abandons the body: Wire closes the connection instead of reading on.
                outcome.error = ClientError(.responseTooLarge, failingURL: url, response: outcome.response, failureReason:
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

    /// The reader of a hop's body under the session's decoding settings.
    private func bodyReader(_ body: HTTPBody, response: ClientResponse?, request: ClientRequest) -> ResponseBodyReader {
        ResponseBodyReader(body, response: response, request: request, decodes: configuration.decodesContent,
                           limits: configuration.contentDecoding, sessionHeaders: configuration.httpAdditionalHeaders)
    }

    /// The body's next chunk, read once the task is not suspended and counted in its progress; nil at the end
    /// of the body, or when the task was cancelled or the body failed (then `outcome.error` says which).
    @inline(__always)  // Called per chunk: no frame of its own.
    nonisolated(nonsending) private func nextChunk(_ iterator: inout ResponseBodyReader, of task: SessionTask, idle: IdleTimer, url: URL,
                           into outcome: inout TransferOutcome) async -> ByteBuffer? {
        if let reason = await task.checkpoint() {
            outcome.error = reason
            return nil
        }
        let chunk: ByteBuffer?
        do {
            chunk = try await iterator.next()
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
    private func reportReceived(_ chunk: ByteBuffer, _ progress: TaskProgress, of task: SessionTask, _ delegate: TaskDelegate,
                                hooks: SessionHooksSnapshot, idle: IdleTimer) async {
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
    private func receiveDownload(_ body: HTTPBody, to request: ClientRequest, of task: SessionTask, _ delegate: TaskDelegate,
                                 idle: IdleTimer, hooks: SessionHooksSnapshot, into outcome: inout TransferOutcome) async {
        let url = request.url
        let file: AsyncFile
        do {
            file = try await openDownloadFile(for: task, url: url)
            outcome.temporaryFile = file.path
        } catch {
            outcome.error = error
            return
        }
        var iterator = bodyReader(body, response: outcome.response, request: request)
        while true {
            guard let chunk = await nextChunk(&iterator, of: task, idle: idle, url: url, into: &outcome) else { break }
            do {
                try await file.write(chunk)
            } catch {
                outcome.error = ClientError(.cannotWriteToFile, failingURL: url, underlying: error,
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
