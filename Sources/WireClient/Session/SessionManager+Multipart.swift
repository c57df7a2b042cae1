import FoundationEssentials
import Wire

extension SessionManager {
    /// Uploads `form` as the body of `request` the way Alamofire does with its encoding memory threshold: a form
    /// shorter than `threshold` is encoded in memory and sent as data; a longer one is first written, part by part,
    /// to a temporary file (0600, in `$TMPDIR/WireClient`), uploaded from that file, and the file removed once the
    /// task completed, whatever the outcome. An empty form sends `request` as it is.
    /// - Parameters:
    ///   - request: The request; its `Content-Type` and `Content-Length` are set from the form.
    ///   - form: The form.
    ///   - threshold: The length from which the body goes through a file.
    /// - Returns: The serialized value, response and body.
    /// - Throws: `ClientError`: `.requestSerializationFailed` when the form refused a part (`refusedPartError`),
    ///   `.cannotWriteToFile` when the spill file cannot be written, a part's
    ///   `.fileNotReachable` or `.bodyLengthMismatch`, or the transfer's error.
    public func upload(
        for request: ClientRequest, multipartFormData form: MultipartFormData,
        usingThreshold threshold: Int64 = MultipartFormData.encodingMemoryThreshold
    ) async throws(ClientError) -> DataResult {
        var request = request
        // A part refused by its append is never sent: the whole upload fails, before any task.
        do throws(ClientError) {
            try form.checkNoPartWasRefused()
        } catch {
            throw error.failing(request.url)
        }
        form.attach(to: &request)
        guard !form.isEmpty else {
            return try await run(makeTask(.upload, request, completionInfo: nil, drivenByCaller: true))
        }
        if form.contentLength < threshold {
            do {
                request.body = .data(try await form.encoded())
            } catch {
                throw error.failing(request.url)
            }
            return try await run(makeTask(.upload, request, completionInfo: nil, drivenByCaller: true))
        }
        let path = "\(DownloadFile.directory)/\(UUID().uuidString).multipart"
        do {
            try await AsyncFile.makeDirectory(DownloadFile.directory, permissions: 0o700)
        } catch {
            throw ClientError(
                .cannotWriteToFile, failingURL: request.url, underlying: error,
                failureReason: "cannot create \(DownloadFile.directory): \(error)")
        }
        let result: Result<DataResult, ClientError>
        do {
            try await form.writeStreamContents(to: path)
            request.body = .file(path: path)
            result = .success(try await run(makeTask(.upload, request, completionInfo: nil, drivenByCaller: true)))
        } catch {
            result = .failure(error.failing(request.url))
        }
        try? await AsyncFile.remove(path)
        return try result.get()
    }
}

extension MultipartFormData {
    /// The whole body in memory (one pass), for small forms.
    func encoded() async throws(ClientError) -> Data {
        guard case .stream(_, let make) = streamedBody else { return Data() }
        var data = Data()
        do {
            for try await chunk in make() { data.append(chunk) }
        } catch let error as ClientError {
            throw error
        } catch {
            throw ClientError(.requestSerializationFailed, underlying: error, failureReason: "a body part failed: \(error)")
        }
        return data
    }
}
