public import Wire

/// The multipart POST (AF's `POST:parameters:headers:constructingBodyWithBlock:progress:success:failure:`):
/// the request from `requestSerializer.multipartFormRequest`, sent by an upload task with the streamed body.
extension HTTPSessionManager {
    /// POST `path` with a multipart body: `parameters` as the first parts, then what `constructingBody` appends.
    /// Returns the resumed upload task, or nil when the request could not be built (GET-like misuse cannot happen
    /// here; a bad URL, parameters or a block error can): then `failure(nil, error)` runs once, later.
    /// - Parameters:
    ///   - path: A path relative to the base URL, or an absolute URL.
    ///   - parameters: Parameters turned into form parts, or nil.
    ///   - headers: Fields applied after serialization (they replace same-named ones).
    ///   - boundary: The boundary to use verbatim; nil for a random one.
    ///   - constructingBody: Appends parts; an error it throws fails the request.
    ///   - progress: Upload progress, on the delegate queue.
    ///   - success: The task and the serialized value, on the completion queue.
    ///   - failure: The task (nil when no request was sent) and the error, on the completion queue.
    @discardableResult
    public func post(
        _ path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil, boundary: String? = nil,
        constructingBody: ((MultipartFormData) throws -> Void)?, progress: TaskProgressHandler? = nil,
        success: Success?, failure: Failure?
    ) -> SessionTask? {
        resumedTask(
            .upload, uploadProgress: progress, downloadProgress: nil, success: success,
            failure: failure
        ) { () throws(ClientError) in
            try multipartRequest(
                path, parameters: parameters, headers: headers, boundary: boundary,
                constructingBody: constructingBody)
        }
    }

    /// POST `path` with a multipart body, as an `async` call: the serialized value, the response and the body.
    /// - Throws: `ClientError`: the request's (bad URL, parameters, the block's error) or the transfer's.
    public func post(
        _ path: String, parameters: Parameters? = nil, headers: HTTPHeaders? = nil, boundary: String? = nil,
        constructingBody: ((MultipartFormData) throws -> Void)?
    ) async throws(ClientError) -> DataResult {
        let request = try multipartRequest(
            path, parameters: parameters, headers: headers, boundary: boundary,
            constructingBody: constructingBody)
        let session = session
        return try await session.run(session.makeTask(.upload, request, completionInfo: nil, drivenByCaller: true))
    }

    /// The multipart request for `path`, with `headers` over the serializer's fields.
    func multipartRequest(
        _ path: String, parameters: Parameters?, headers: HTTPHeaders?, boundary: String?,
        constructingBody: ((MultipartFormData) throws -> Void)?
    ) throws(ClientError) -> ClientRequest {
        let serializer = requestSerializer
        let (url, wireURL) = try resolve(path)
        var request = ClientRequest(url: url, method: "POST")
        request.wireURL = wireURL
        serializer.httpSerializer.applySettings(to: &request)
        request = try serializer.multipartFormRequest(
            bySerializing: request, parameters: parameters, boundary: boundary,
            constructingBody: constructingBody)
        if let headers {
            for name in Set(headers.indices.map { headers.name(at: $0).lowercased() }) {
                request.headers.remove(name: name)
            }
            request.headers.add(contentsOf: headers)
        }
        return request
    }
}
