import FoundationEssentials
import Synchronization
@_spi(Locking) import Wire

/// The task's side of its transfer chain: what WireClient's stages ask of the task, answered from the task, its idle
/// timeout and the manager's hooks.
extension TaskDelegate: TransferContext, ProxyChallengeAnswering, CacheEntryProposing, DownloadResuming {
    var taskIdentifier: Int { task.taskIdentifier }
    var isDownload: Bool { task.kind == .download }
    var isDataTask: Bool { task.kind == .data }
    var originalRequest: ClientRequest { task.originalRequest }
    var currentRequest: ClientRequest { task.currentRequest }
    var cancelReason: ClientError? { task.cancelReason }

    func cancelReason(after error: any Error) -> ClientError? {
        task.cancelReason(after: error)
    }

    func cancelTask() -> ClientError {
        task.cancel()
        return task.cancelReason
            ?? ClientError(
                .cancelled, failingURL: task.currentRequest.url,
                failureReason: "the task was cancelled")
    }

    nonisolated(nonsending) func checkpoint() async -> ClientError? {
        await task.checkpoint()
    }

    func beginAttempt(with request: ClientRequest) {
        records.withLock {
            $0.response = nil; $0.metrics = nil
        }
        task.beginAttempt(with: request)
    }

    func setCurrentRequest(_ request: ClientRequest) {
        task.setCurrentRequest(request)
    }

    func setResponse(_ response: ClientResponse) {
        task.setResponse(response)
    }

    func bodyReceived(_ count: Int) {
        task.bodyReceived(count)
    }

    func holdIdle() {
        idle.beginHold()
    }

    func releaseIdle() {
        idle.endHold()
    }

    func pause(for delay: Duration) async {
        await task.pause(for: delay)
    }

    func record(_ response: ClientResponse, metrics: HTTPClientMetrics?) {
        records.withLock {
            $0.response = response; $0.metrics = metrics
        }
    }

    var recordedResponse: ClientResponse? { records.withLock { $0.response } }

    nonisolated(nonsending) func proposeRedirect(
        _ proposed: ClientRequest, keepsBody: Bool,
        after response: ClientResponse
    ) async -> ClientRequest? {
        var proposed = proposed
        let hooks = manager.hooks
        let task = task
        if keepsBody, let needBody = hooks.taskNeedNewBodyStream,
            let body = await manager.askCaller(idle, { needBody(task) })
        {
            proposed.body = body
        }
        guard let willRedirect = hooks.taskWillPerformHTTPRedirection else { return proposed }
        let offer = proposed
        return await manager.askCaller(idle) { willRedirect(task, response, offer) }
    }

    nonisolated(nonsending) func continueDownload(at offset: Int64, of total: Int64) async {
        let progress = task.continueProgress(at: offset, of: total)
        let hook = manager.hooks.downloadTaskDidResume
        let report = offset > 0 ? downloadProgress : nil
        guard hook != nil || report != nil else { return }
        let task = task
        await manager.askCaller(idle) {
            hook?(task, offset, total)
            report?(progress)
        }
    }

    @inline(__always) nonisolated(nonsending) func exchange(_ request: ClientRequest, fields: HTTPHeaders)
        async throws(ClientError) -> StageResponse
    {
        try await manager.exchange(request, fields: fields, for: self)
    }

    @inline(__always) nonisolated(nonsending) func receive(_ response: StageResponse) async -> StageResponse {
        if case .received = response.body.content { return response }
        return await manager.receive(response, for: self)
    }

    // MARK: Challenges, the cache, resumption

    var answersChallenges: Bool { manager.hooks.taskDidReceiveAuthenticationChallenge != nil }

    nonisolated(nonsending) func answer(_ challenge: AuthenticationChallenge) async -> AuthenticationChallengeDisposition {
        guard let hook = manager.hooks.taskDidReceiveAuthenticationChallenge else { return .performDefaultHandling }
        let task = task
        return await manager.askCaller(idle) { hook(task, challenge) }
    }

    func proxyAnswer(for proxy: Proxy) -> Proxy? {
        records.withLock { $0.proxyAnswers[proxy] }
    }

    func rememberProxyAnswer(_ answer: Proxy, for proxy: Proxy) {
        records.withLock { $0.proxyAnswers[proxy] = answer }
    }

    nonisolated(nonsending) func propose(_ entry: CachedResponse) async -> CachedResponse? {
        guard let willCache = manager.hooks.dataTaskWillCacheResponse else { return entry }
        let task = task
        return await manager.askCaller(idle) { willCache(task, entry) }
    }

    var resumption: DownloadResumption { task.resumption }

    func updateResumption(_ change: (inout DownloadResumption) -> Void) {
        task.updateResumption(change)
    }
}
