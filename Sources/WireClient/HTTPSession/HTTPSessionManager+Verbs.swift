public import Wire

/// The verbs, in AFNetworking's callback form: each creates a data task, resumes it and returns it (nil when the
/// request could not be built; then `failure(nil, error)` runs once, later, on the completion queue).
extension HTTPSessionManager {
    /// The task and the serialized value.
    public typealias Success = @Sendable (SessionTask, (any Sendable)?) -> Void
    /// The task (nil when no request was sent) and the error.
    public typealias Failure = @Sendable (SessionTask?, ClientError) -> Void

    /// GET `path`, parameters in the query.
    @discardableResult
    public func get(
        _ path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil,
        progress: TaskProgressHandler? = nil, success: Success?, failure: Failure?
    ) -> SessionTask? {
        dataTask(
            method: "GET", path: path, parameters: parameters, headers: headers, downloadProgress: progress,
            success: success, failure: failure)
    }

    /// HEAD `path`, parameters in the query; `success` receives only the task (a HEAD response has no body).
    @discardableResult
    public func head(
        _ path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil,
        success: (@Sendable (SessionTask) -> Void)?, failure: Failure?
    ) -> SessionTask? {
        dataTask(
            method: "HEAD", path: path, parameters: parameters, headers: headers,
            success: { task, _ in success?(task) }, failure: failure)
    }

    /// POST `path`, parameters in the body.
    @discardableResult
    public func post(
        _ path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil,
        progress: TaskProgressHandler? = nil, success: Success?, failure: Failure?
    ) -> SessionTask? {
        dataTask(
            method: "POST", path: path, parameters: parameters, headers: headers, uploadProgress: progress,
            success: success, failure: failure)
    }

    /// PUT `path`, parameters in the body.
    @discardableResult
    public func put(
        _ path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil,
        success: Success?, failure: Failure?
    ) -> SessionTask? {
        dataTask(method: "PUT", path: path, parameters: parameters, headers: headers, success: success, failure: failure)
    }

    /// PATCH `path`, parameters in the body.
    @discardableResult
    public func patch(
        _ path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil,
        success: Success?, failure: Failure?
    ) -> SessionTask? {
        dataTask(method: "PATCH", path: path, parameters: parameters, headers: headers, success: success, failure: failure)
    }

    /// DELETE `path`, parameters in the query.
    @discardableResult
    public func delete(
        _ path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil,
        success: Success?, failure: Failure?
    ) -> SessionTask? {
        dataTask(method: "DELETE", path: path, parameters: parameters, headers: headers, success: success, failure: failure)
    }
}

/// The verbs as `async` functions: the serialized value, the response and the body, or a `ClientError` (which carries
/// the response and the body when there was one).
extension HTTPSessionManager {
    /// GET `path`, parameters in the query.
    public func get(_ path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil) async throws(ClientError)
        -> DataResult
    {
        try await perform("GET", path, parameters, headers)
    }

    /// HEAD `path`, parameters in the query.
    public func head(_ path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil) async throws(ClientError)
        -> DataResult
    {
        try await perform("HEAD", path, parameters, headers)
    }

    /// POST `path`, parameters in the body.
    public func post(_ path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil) async throws(ClientError)
        -> DataResult
    {
        try await perform("POST", path, parameters, headers)
    }

    /// PUT `path`, parameters in the body.
    public func put(_ path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil) async throws(ClientError)
        -> DataResult
    {
        try await perform("PUT", path, parameters, headers)
    }

    /// PATCH `path`, parameters in the body.
    public func patch(_ path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil) async throws(ClientError)
        -> DataResult
    {
        try await perform("PATCH", path, parameters, headers)
    }

    /// DELETE `path`, parameters in the query.
    public func delete(_ path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil) async throws(ClientError)
        -> DataResult
    {
        try await perform("DELETE", path, parameters, headers)
    }

    /// A verb's request through the session, as `data(for:)` sends it; in the verb's own executor (the verbs are
    /// `nonisolated`: they left the caller's actor already), so the request meets one executor check, not three.
    @inline(__always)  // With `run` inlined into it: the verb's frame is the request's only one above the transfer.
    nonisolated(nonsending) private func perform(
        _ method: String, _ path: String, _ parameters: Parameters?,
        _ headers: HTTPHeaders?
    ) async throws(ClientError) -> DataResult {
        let request = try self.request(method: method, path: path, parameters: parameters, headers: headers)
        return try await session.run(session.makeTask(.data, request, completionInfo: nil, drivenByCaller: true))
    }
}
