public import Dispatch
public import FoundationEssentials
import Synchronization
@_spi(Locking) import Wire

/// Downloads resources with one request per URL however many ask, a bounded number at once, through a memory cache
/// (AFImageDownloader, for any value).
///
/// ```swift
/// let downloader = ResourceDownloader<Data>.shared
/// let receipt = downloader.download(ClientRequest(url: avatarURL), success: { _, _, data in show(data) },
///                                   failure: { _, _, error in print(error) })
/// // later, if the row scrolled away:
/// if let receipt { downloader.cancel(receipt) }
/// ```
///
/// A request for a URL that is already downloading joins that download (no cache lookup, no new slot); otherwise the
/// cache is asked (for the cache policies that allow it) and a hit is answered with no request and no receipt; then
/// the session's `URLCache`, if it has one: an entry a task would be answered with without the network (fresh, or any
/// under the `returnCacheData…` policies) is answered from directly, with no task and no receipt, through the
/// session's response serializer; otherwise a task is made (a stale entry is revalidated by it) and started when
/// fewer than `maximumActiveDownloads` run, else queued (`prioritization`).
/// Every handler runs on `callbackQueue`, never under the downloader's lock, so a handler may call `download` or
/// `cancel` on the same downloader.
public final class ResourceDownloader<Value: Sendable>: Sendable {
    /// Called with the request, the response (nil for a cache hit) and the value.
    public typealias Success = @Sendable (ClientRequest, ClientResponse?, Value) -> Void
    /// Called with the request, the response if one arrived, and the error.
    public typealias Failure = @Sendable (ClientRequest, ClientResponse?, ClientError) -> Void
    /// Decides whether a downloaded value is cached: the value, its request and response.
    public typealias ShouldCache = @Sendable (Value, ClientRequest, ClientResponse?) -> Bool

    /// What `download` found under its lock.
    private enum StartOutcome {
        case joined(SessionTask)
        case cached(Value)
        case created(SessionTask, startNow: Bool)
        /// No download to join and no value in memory: the session's `URLCache` is asked, outside the lock.
        case asksURLCache
    }

    struct Requester {
        let request: ClientRequest
        let success: Success
        let failure: Failure
    }

    /// Runs the downloads; its `session`'s response serializer must produce `Value`.
    public let sessionManager: HTTPSessionManager
    /// Where downloaded values are kept and looked up; nil for none.
    public let cache: AutoPurgingCache<Value>?
    /// Where every success and failure handler runs.
    public let callbackQueue: DispatchQueue
    /// The order queued downloads start in.
    public var prioritization: DownloadPrioritization { state.withLock { $0.prioritization } }
    /// The most downloads running at once.
    public var maximumActiveDownloads: Int { state.withLock { $0.maximumActiveDownloads } }
    /// What `ResourceSlot.load(url:placeholder:)` puts in `Accept`: `*/*`, or `image/*` for `images()`.
    public let acceptHeader: String

    private let state: Lock<DownloadQueue<Requester>>
    private let shouldCacheHook = Lock<ShouldCache?>(nil)
    let slots = SlotRegistry<Value>()

    /// Creates a downloader.
    /// - Parameters:
    ///   - sessionManager: Runs the downloads, used as it is; nil makes one from `defaultSessionConfiguration` whose
    ///     response serializer is `responseSerializer`.
    ///   - responseSerializer: The serializer of a manager made here; it must produce `Value`.
    ///   - prioritization: The order queued downloads start in.
    ///   - maximumActiveDownloads: The most downloads running at once (at least 1).
    ///   - cache: Where values are kept and looked up; nil for none.
    ///   - callbackQueue: Where handlers run; nil makes a private serial queue (never the main queue).
    ///   - acceptHeader: What `ResourceSlot.load(url:placeholder:)` asks for.
    public init(
        sessionManager: HTTPSessionManager? = nil, responseSerializer: any ResponseSerializer,
        prioritization: DownloadPrioritization = .fifo, maximumActiveDownloads: Int = 4,
        cache: AutoPurgingCache<Value>?, callbackQueue: DispatchQueue? = nil, acceptHeader: String = "*/*"
    ) {
        if let sessionManager {
            self.sessionManager = sessionManager
        } else {
            // Without a base URL the initialiser has nothing to reject.
            let manager = try! HTTPSessionManager(configuration: Self.defaultSessionConfiguration)
            manager.responseSerializer = responseSerializer
            self.sessionManager = manager
        }
        self.cache = cache
        self.callbackQueue = callbackQueue ?? DispatchQueue(label: "WireClient.ResourceDownloader.callbacks")
        self.acceptHeader = acceptHeader
        state = Lock(DownloadQueue(prioritization: prioritization, maximumActiveDownloads: maximumActiveDownloads))
    }

    /// The configuration of a manager the downloader makes itself: the default one with a 60 s request timeout
    /// (AFImageDownloader's; cookies on, `shouldUsePipelining` off) and a process-wide
    /// `URLCache` of 20 MiB in memory and 150 MiB on disk under `$XDG_CACHE_HOME/wireclient.resourcedownloader`.
    public static var defaultSessionConfiguration: SessionConfiguration {
        var configuration = SessionConfiguration.default
        configuration.timeoutIntervalForRequest = .seconds(60)
        configuration.shouldUsePipelining = false
        configuration.urlCache = .resourceDownloader
        return configuration
    }

    /// Decides per download whether its value goes into `cache`; nil (the default) caches every success. Runs on the
    /// session's completion queue, or, for a download the session's `URLCache` answered without a task, on
    /// `callbackQueue` before the success handler; outside every lock.
    public var shouldCache: ShouldCache? {
        get { shouldCacheHook.withLock { $0 } }
        set { shouldCacheHook.withLock { $0 = newValue } }
    }

    /// Downloads started and not yet completed.
    package var activeDownloadCount: Int { state.withLock { $0.activeCount } }
    /// Downloads waiting for a slot.
    package var queuedDownloadCount: Int { state.withLock { $0.queuedCount } }

    // MARK: Downloading

    /// Downloads `request`'s resource, or joins the download already running for its URL.
    /// - Parameters:
    ///   - request: A GET request; its URL's absolute string is the merge and cache key.
    ///   - receiptID: This requester's identifier.
    ///   - success: Called once with the value, on `callbackQueue`.
    ///   - failure: Called once with the error (`.cancelled` when this receipt is cancelled), on `callbackQueue`.
    /// - Returns: The receipt, or nil when `cache` answered (success follows, with a nil response), the session's
    ///   `URLCache` answered without a task (success follows with the stored response, `source` `.cache`, or failure
    ///   if the response serializer refuses it), or the request was refused: a URL whose scheme is not `http`,
    ///   `https` or `http+unix`, or that has no host (failure follows at once with `.badURL`, as AFImageDownloader
    ///   answers a nil URL), or a method other than GET (failure follows with `.requestSerializationFailed`).
    @discardableResult
    // Specialised for the two values the module serves: unspecialised, each call looked up the metadata of the
    // generic types it touches (`Locked<LRUStore<Value>>`, the queue's), more than half of a cache hit's cost.
    @_specialize(exported:true,where Value == Data)
    @_specialize(exported:true,where Value == ImageData)
    public func download(
        _ request: ClientRequest, receiptID: UUID = ReceiptIdentifiers.next(), success: @escaping Success,
        failure: @escaping Failure
    ) -> DownloadReceipt? {
        guard Self.isDownloadable(request.url) else {
            let error = ClientError(.badURL, failingURL: request.url, failureReason: Self.undownloadableReason(request.url))
            callbackQueue.async { failure(request, nil, error) }
            return nil
        }
        guard request.method.uppercased() == "GET" else {
            let error = ClientError(
                .requestSerializationFailed, failingURL: request.url,
                failureReason: "ResourceDownloader downloads with GET only, not \(request.method)")
            callbackQueue.async { failure(request, nil, error) }
            return nil
        }
        let key = request.url.absoluteString
        let requester = Requester(request: request, success: success, failure: failure)
        let cache = usesCache(request) ? self.cache : nil
        let session = sessionManager.session
        var askingURLCache = session.configuration.urlCache != nil
        while true {
            switch start(
                request, key: key, receiptID: receiptID, requester: requester, cache: cache,
                askingURLCache: askingURLCache)
            {
            case .joined(let task):
                return DownloadReceipt(receiptID: receiptID, task: task)
            case .cached(let value):
                callbackQueue.async { success(request, nil, value) }
                return nil
            case .created(let task, let startNow):
                if startNow { task.resume() }
                return DownloadReceipt(receiptID: receiptID, task: task)
            case .asksURLCache:
                // Outside the lock: the entry file may be read here. Two requesters that both miss meet again in the
                // second pass, where the second joins the first one's task.
                if let answer = session.cachedAnswer(for: request, blockingReadsUpTo: largestBlockingCacheRead) {
                    let serializer = session.responseSerializer
                    callbackQueue.async { [self] in deliver(answer, serializedBy: serializer, to: requester) }
                    return nil
                }
                askingURLCache = false
            }
        }
    }

    /// Under the lock: joins the download of `key`, or answers from `cache`, or (unless the session's `URLCache` is to
    /// be asked first) makes the task and registers it.
    // Inlined into `download`'s specialisations, like the two helpers below: unspecialised, each call looked up the
    // generic metadata of `Value`'s types again.
    @inline(__always)
    private func start(
        _ request: ClientRequest, key: String, receiptID: UUID, requester: Requester,
        cache: AutoPurgingCache<Value>?, askingURLCache: Bool
    ) -> StartOutcome {
        state.withLock { queue -> StartOutcome in
            if let task = queue.join(key, receiptID: receiptID, requester: requester) { return .joined(task) }
            // Under the lock so that two requesters of one URL cannot both miss and both download. The cache and the
            // task factory run no user code.
            if let value = cache?.value(for: request) { return .cached(value) }
            if askingURLCache { return .asksURLCache }
            let id = ReceiptIdentifiers.next()
            // Weak: a running task must not keep its downloader alive (the session holds the task until it ends);
            // a downloader that goes first cancels its tasks in `deinit` and has told their requesters already.
            let task = sessionManager.session.dataTask(with: request) { [weak self] response, value, error in
                self?.taskDidComplete(key: key, id: id, response: response, value: value, error: error)
            }
            return .created(task, startNow: queue.add(key, id: id, task: task, receiptID: receiptID, requester: requester))
        }
    }

    /// Whether `url` can be downloaded at all: an `http` or `https` URL with a host, or an `http+unix` URL (its
    /// authority is the percent-encoded socket path, which Wire checks). Anything else fails at once with `.badURL`,
    /// before a task exists.
    static func isDownloadable(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "http", "https": !(url.host ?? "").isEmpty
        case "http+unix": true
        default: false
        }
    }

    /// Why `url` cannot be downloaded, for the `.badURL` error's reason.
    static func undownloadableReason(_ url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        if scheme == "http" || scheme == "https" || scheme == "http+unix" { return "The URL has no host: \(url.absoluteString)" }
        return "ResourceDownloader downloads http, https and http+unix URLs only, not \(url.absoluteString)"
    }

    /// Releasing the downloader ends its downloads, as AFImageDownloader's deallocation does: every requester still
    /// waiting, queued or running, is failed with `.cancelled` on `callbackQueue`, and every task is cancelled.
    deinit {
        let entries = state.withLock { $0.removeAll() }
        for entry in entries {
            let requesters = entry.requesters.map(\.requester)
            callbackQueue.async {
                for requester in requesters {
                    let url = requester.request.url
                    requester.failure(
                        requester.request, nil,
                        ClientError(
                            .cancelled, failingURL: url,
                            failureReason: "ResourceDownloader cancelled URL request: \(url.absoluteString)"))
                }
            }
            entry.task.cancel()
        }
    }

    /// Fails the receipt's requester with `.cancelled` (reason "ResourceDownloader cancelled URL request: <url>"),
    /// and cancels the download when no requester is left, queued or running. An unknown or finished receipt does
    /// nothing.
    public func cancel(_ receipt: DownloadReceipt) {
        let url = receipt.task.originalRequest.url
        guard
            let cancellation = state.withLock({
                $0.cancel(url.absoluteString, taskIdentifier: receipt.task.taskIdentifier, receiptID: receipt.receiptID)
            })
        else { return }
        let error = ClientError(
            .cancelled, failingURL: url,
            failureReason: "ResourceDownloader cancelled URL request: \(url.absoluteString)")
        let requester = cancellation.requester
        callbackQueue.async { requester.failure(requester.request, nil, error) }
        cancellation.taskToCancel?.cancel()
    }

    /// Downloads `request`'s resource (see `download(_:receiptID:success:failure:)`); cancelling the calling task
    /// cancels this requester's receipt.
    /// - Returns: The value and the response (nil when the cache answered).
    /// - Throws: `ClientError`: the download's failure, or `.cancelled`.
    public func download(_ request: ClientRequest) async throws(ClientError) -> (value: Value, response: ClientResponse?) {
        let pending = PendingReceipt()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<(value: Value, response: ClientResponse?), ClientError>, Never>) in
                let receipt = download(
                    request,
                    success: { _, response, value in
                        continuation.resume(returning: .success((value, response)))
                    },
                    failure: { _, _, error in
                        continuation.resume(returning: .failure(error))
                    })
                if let receipt, pending.set(receipt) { cancel(receipt) }
            }
        } onCancel: {
            if let receipt = pending.cancel() { cancel(receipt) }
        }
        return try result.get()
    }

    // MARK: Completion

    private func usesCache(_ request: ClientRequest) -> Bool {
        switch request.cachePolicy ?? .useProtocolCachePolicy {
        case .useProtocolCachePolicy, .returnCacheDataElseLoad, .returnCacheDataDontLoad: true
        case .reloadIgnoringLocalCacheData: false
        }
    }

    /// The task of download `id` completed, on the session's completion queue.
    private func taskDidComplete(
        key: String, id: UUID, response: ClientResponse?, value: (any Sendable)?,
        error: ClientError?
    ) {
        let (requesters, start) = state.withLock { $0.complete(key, id: id) }
        for task in start { task.resume() }
        guard let requesters, !requesters.isEmpty else { return }
        let outcome = outcome(of: requesters[0].request, response: response, value: value, error: error)
        callbackQueue.async {
            for requester in requesters {
                switch outcome {
                case .success(let value): requester.success(requester.request, response, value)
                case .failure(let error): requester.failure(requester.request, response, error)
                }
            }
        }
    }

    /// The session's `URLCache` answered `requester` without a task: on `callbackQueue`, the session's response
    /// serializer makes the value from the stored response, as a task's completion would, the value goes into `cache`
    /// as a downloaded one does, and the requester is told.
    @inline(__always)
    private func deliver(
        _ answer: (response: ClientResponse, data: Data), serializedBy serializer: any ResponseSerializer,
        to requester: Requester
    ) {
        let serialized = serializer.serialize(response: answer.response, data: answer.data)
        switch outcome(of: requester.request, response: answer.response, value: serialized.value, error: serialized.error) {
        case .success(let value): requester.success(requester.request, answer.response, value)
        case .failure(let error): requester.failure(requester.request, answer.response, error)
        }
    }

    /// What a download of `request` ended with, given the serialized value or the error; a value goes into `cache`
    /// (unless `shouldCache` says no).
    @inline(__always)
    private func outcome(
        of request: ClientRequest, response: ClientResponse?, value: (any Sendable)?,
        error: ClientError?
    ) -> Result<Value, ClientError> {
        if let error { return .failure(error) }
        guard let value = value as? Value ?? Self.emptyValue(for: value) else {
            return .failure(
                ClientError(
                    .responseSerializationFailed, failingURL: request.url, response: response,
                    failureReason:
                        "The response serializer produced \(value.map { "\(type(of: $0))" } ?? "nothing"), not \(Value.self)"))
        }
        if let cache, shouldCache?(value, request, response) ?? true {
            cache.add(value, for: request)
        }
        return .success(value)
    }

    /// An empty body is no value for `HTTPResponseSerializer`; for `Data` downloads it is the empty `Data`.
    private static func emptyValue(for value: (any Sendable)?) -> Value? {
        value == nil ? (Data() as any Sendable) as? Value : nil
    }
}

/// The largest entry file a download reads on its caller's thread to answer from the session's `URLCache` without a
/// task (about 30 µs of reading and checking from the page cache); a larger entry is read by a task, on Wire's file
/// threads.
private let largestBlockingCacheRead = 256 << 10

/// The receipt of an `async` download, for its cancellation handler: whichever of "receipt known" and "task
/// cancelled" comes second does the cancelling.
private final class PendingReceipt: Sendable {
    private let state = Lock<(receipt: DownloadReceipt?, cancelled: Bool)>((nil, false))

    /// Records the receipt; returns true when the task was already cancelled (the caller cancels it).
    func set(_ receipt: DownloadReceipt) -> Bool {
        state.withLock { state in
            state.receipt = receipt
            return state.cancelled
        }
    }

    /// Marks the task cancelled; returns the receipt to cancel if it is known.
    func cancel() -> DownloadReceipt? {
        state.withLock { state in
            state.cancelled = true
            return state.receipt
        }
    }
}
