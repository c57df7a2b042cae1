public import Dispatch
public import FoundationEssentials
import Glibc
import Synchronization
@_spi(Locking) public import Wire

/// AFHTTPSessionManager on Wire: a base URL, a request serializer and the HTTP verbs over a `SessionManager`.
///
/// Every verb resolves its path against the base URL (RFC 3986, after the percent-encoding pre-pass; see `BaseURL`),
/// serializes the parameters with `requestSerializer` (into the URI for `httpMethodsEncodingParametersInURI`, GET,
/// HEAD and DELETE by default, into the body otherwise), applies the per-call headers over what the serializer set,
/// creates a data task on `session`, **resumes it**, and returns it. A request that cannot be built (a bad URL, a
/// serializer error) gives nil, and `failure(nil, error)` runs once, after the verb returned, on the completion
/// queue; nothing is sent.
public final class HTTPSessionManager: Sendable {
    /// The manager that runs the tasks: its configuration, hooks, events, queues and response serializer apply.
    public let session: SessionManager
    /// The base every path is resolved against, normalised (a non-empty path ends in `/`); nil when paths must be
    /// absolute URLs.
    public let baseURL: URL?

    private let base: BaseURL?
    /// The request serializer, and the last request it built without parameters or headers of the call's own.
    private let building: Lock<RequestBuilding>
    /// Paths resolved lately, with their URLs: a verb called again with the same path (an API client's common case)
    /// reuses the URL instead of parsing it again, which was most of the cost of building a request.
    private let recentlyResolved = Lock(RecentlyResolved())

    /// Creates a manager.
    /// - Parameters:
    ///   - baseURL: The base for relative paths; nil to use absolute URLs only.
    ///   - configuration: The session's configuration.
    /// - Throws: `ClientError` `.badURL` when `baseURL` is not an absolute http(s) URL with a host.
    public init(baseURL: String? = nil, configuration: SessionConfiguration = .default) throws(ClientError) {
        let base = try baseURL.map { (text) throws(ClientError) -> BaseURL in try BaseURL(text) }
        self.base = base
        self.baseURL = base?.url
        session = SessionManager(configuration: configuration)
        building = Lock(RequestBuilding(serializer: HTTPRequestSerializer(), generation: 0))
    }

    /// Builds every request: `HTTPRequestSerializer()` by default. Read and replaced under a lock, so a verb always
    /// uses one whole serializer.
    public var requestSerializer: any RequestSerializer {
        get { building.withLock { $0.serializer } }
        set { building.withLock { $0 = RequestBuilding(serializer: newValue, generation: $0.generation &+ 1) } }
    }

    /// Serializes every response: the session's, `JSONResponseSerializer()` by default.
    public var responseSerializer: any ResponseSerializer {
        get { session.responseSerializer }
        set { session.responseSerializer = newValue }
    }

    /// Where completion, success and failure handlers run: the session's completion queue (a private serial queue
    /// when nil, never the main queue).
    public var completionQueue: DispatchQueue? {
        get { session.completionQueue }
        set { session.completionQueue = newValue }
    }

    // MARK: Building a request

    /// The request a verb would send: the path resolved against the base URL, the serializer's settings, headers and
    /// parameters, then `headers` over the serializer's fields (same names replaced, compared case-insensitively).
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - path: A path relative to the base URL, or an absolute URL.
    ///   - parameters: Encoded into the URI or the body as the serializer decides.
    ///   - headers: Fields applied after serialization.
    /// - Throws: `ClientError` `.badURL` or the serializer's `.requestSerializationFailed`.
    public func request(
        method: String, path: String, parameters: Parameters? = nil,
        headers: HTTPHeaders? = nil
    ) throws(ClientError) -> ClientRequest {
        let plain = parameters == nil && headers == nil
        if plain, let known = building.withLock({ $0.remembered(method: method, path: path) }) { return known }
        let (url, wireURL) = try resolve(path)
        let (serializer, generation) = building.withLock { ($0.serializer, $0.generation) }
        var request = ClientRequest(url: url, method: method)
        request.wireURL = wireURL
        serializer.httpSerializer.applySettings(to: &request)
        request = try serializer.request(bySerializing: request, parameters: parameters)
        if plain {
            let built = request
            building.withLock { $0.remember(built, method: method, path: path, builtBy: generation) }
        }
        if let headers {
            for name in Set(headers.indices.map { headers.name(at: $0).lowercased() }) {
                request.headers.remove(name: name)
            }
            request.headers.add(contentsOf: headers)
        }
        return request
    }

    func resolve(_ path: String) throws(ClientError) -> (url: URL, wireURL: Boxed<HTTPURL>?) {
        if let known = recentlyResolved.withLock({ $0.url(for: path) }) { return known }
        let url = try resolveAnew(path)
        // Parsed for Wire once here rather than for each request sent to it; nil (parsed, and refused, when a
        // request is sent) for a URL Wire does not take.
        let wireURL = (try? HTTPURL(url.absoluteString)).map(Boxed.init)
        recentlyResolved.withLock { $0.remember(url, wireURL, for: path) }
        return (url, wireURL)
    }

    private func resolveAnew(_ path: String) throws(ClientError) -> URL {
        if let base { return try base.resolve(path) }
        let escaped = BaseURL.escapingDisallowedBytes(path)
        guard let url = URL(string: escaped), let scheme = url.scheme?.lowercased(),
            ["http", "https", "http+unix"].contains(scheme)
        else {
            throw ClientError(.badURL, failureReason: "Not an absolute http(s) URL, and the manager has no base URL: \(path)")
        }
        return url
    }

    // MARK: Tasks

    /// A resumed data task for `method`; the shared body of every callback verb.
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - path: A path relative to the base URL, or an absolute URL.
    ///   - parameters: Encoded into the URI or the body as the serializer decides.
    ///   - headers: Fields applied after serialization.
    ///   - uploadProgress: Upload progress, on the delegate queue.
    ///   - downloadProgress: Download progress, on the delegate queue.
    ///   - success: The task and the serialized value, on the completion queue.
    ///   - failure: The task (nil when the request could not be built) and the error, on the completion queue.
    /// - Returns: The running task, or nil when the request could not be built.
    @discardableResult
    public func dataTask(
        method: String, path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil,
        uploadProgress: TaskProgressHandler? = nil, downloadProgress: TaskProgressHandler? = nil,
        success: (@Sendable (SessionTask, (any Sendable)?) -> Void)?,
        failure: (@Sendable (SessionTask?, ClientError) -> Void)?
    ) -> SessionTask? {
        resumedTask(
            .data, uploadProgress: uploadProgress, downloadProgress: downloadProgress, success: success,
            failure: failure
        ) { () throws(ClientError) in
            try self.request(method: method, path: path, parameters: parameters, headers: headers)
        }
    }

    /// A resumed task of `kind` for the request `build` makes, reporting to `success` or `failure`: the shared body
    /// of every callback verb. A request that cannot be built reaches `failure(nil, error)` once, later.
    func resumedTask(
        _ kind: SessionTask.Kind, uploadProgress: TaskProgressHandler?, downloadProgress: TaskProgressHandler?,
        success: (@Sendable (SessionTask, (any Sendable)?) -> Void)?,
        failure: (@Sendable (SessionTask?, ClientError) -> Void)?,
        build: () throws(ClientError) -> ClientRequest
    ) -> SessionTask? {
        let request: ClientRequest
        do {
            request = try build()
        } catch {
            deliverLater { failure?(nil, error) }
            return nil
        }
        let handoff = TaskHandoff()
        let task = session.makeTask(kind, request, uploadProgress: uploadProgress, downloadProgress: downloadProgress) {
            _, value, error in
            guard let task = handoff.take() else { return }
            if let error {
                failure?(task, error)
            } else {
                success?(task, value)
            }
        }
        handoff.set(task)
        task.resume()
        return task
    }

    /// Runs `body` once on the completion queue after the caller returned, inside the completion group.
    func deliverLater(_ body: @escaping @Sendable () -> Void) {
        let queue = session.completionQueue ?? session.privateCompletionQueue
        let group = session.completionGroup
        group?.enter()
        queue.async {
            body()
            group?.leave()
        }
    }
}

/// Hands a callback verb's task to its own completion handler: set right after the task is made (it starts suspended,
/// so its handler cannot run before) and taken once, so the handler does not keep the task alive after it ran.
final class TaskHandoff: Sendable {
    private let task = Lock<SessionTask?>(nil)

    func set(_ value: SessionTask) { task.withLock { $0 = value } }

    func take() -> SessionTask? { task.withLock { $0.take() } }
}

/// A manager's request serializer and the last request it built for a verb without parameters or headers of its
/// own: an API client calling the same endpoint again gets that request (a value: the copy shares its storage) instead
/// of building an equal one. Only `HTTPRequestSerializer`'s requests are remembered: it is a value whose result
/// depends on the method, the path and its own settings alone, where another serializer may add what changes from
/// call to call (a signature, a nonce). Replacing the serializer forgets the request.
struct RequestBuilding {
    let serializer: any RequestSerializer
    /// Counts the serializers set: a request built by an earlier one is not remembered.
    let generation: Int
    private let remembersRequests: Bool
    private var last: (method: String, path: String, request: ClientRequest)?

    init(serializer: any RequestSerializer, generation: Int) {
        self.serializer = serializer
        self.generation = generation
        remembersRequests = serializer is HTTPRequestSerializer
    }

    /// The request remembered for exactly these bytes of method and path.
    func remembered(method: String, path: String) -> ClientRequest? {
        guard let last, RecentlyResolved.sameBytes(last.path, path), RecentlyResolved.sameBytes(last.method, method)
        else { return nil }
        return last.request
    }

    /// Remembers `request`, built for `method` and `path` by the serializer of `generation`, unless another
    /// serializer was set meanwhile.
    mutating func remember(_ request: ClientRequest, method: String, path: String, builtBy generation: Int) {
        guard remembersRequests, generation == self.generation else { return }
        last = (method, path, request)
    }
}

/// The last few paths a manager resolved and their URLs (resolution depends on the path alone: the base URL never
/// changes), replaced in turn.
struct RecentlyResolved {
    private static let capacity = 8
    private var entries: [(path: String, url: URL, wireURL: Boxed<HTTPURL>?)] = []
    private var next = 0

    /// The URL remembered for exactly these bytes (not `String` equality, which takes canonically equivalent text,
    /// "K" and the Kelvin sign, as equal where escaping does not).
    func url(for path: String) -> (url: URL, wireURL: Boxed<HTTPURL>?)? {
        for entry in entries where Self.sameBytes(entry.path, path) { return (entry.url, entry.wireURL) }
        return nil
    }

    mutating func remember(_ url: URL, _ wireURL: Boxed<HTTPURL>?, for path: String) {
        if entries.count < Self.capacity {
            entries.append((path, url, wireURL))
        } else {
            entries[next] = (path, url, wireURL)
            next = (next + 1) % Self.capacity
        }
    }

    /// Whether two strings hold the same UTF-8 bytes: the lengths first, then the bytes as one buffer each (native
    /// strings have them contiguous), not an element-by-element walk of the views.
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let compared = a.utf8.withContiguousStorageIfAvailable { left in
            b.utf8.withContiguousStorageIfAvailable { right in
                // memcmp: a byte loop took ten instructions a byte, on every request's path.
                left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
        return (compared ?? nil) ?? a.utf8.elementsEqual(b.utf8)
    }
}
