import FoundationEssentials
import Wire

extension RequestSerializer {
    /// A multipart request (AF's `multipartFormRequestWithMethod:URLString:parameters:constructingBodyWithBlock:`,
    /// AFMultipartFormData): the request serialized without parameters, then a form whose first parts are
    /// `parameters` (the query-string walk's pairs, not percent-escaped: `.data` raw, `.null` empty, booleans
    /// `1`/`0`), then what `constructingBody` appends. With no part at all the request stays the plain form request.
    /// - Parameters:
    ///   - method: Any method but GET and HEAD.
    ///   - urlString: An absolute URL.
    ///   - parameters: Parameters turned into form parts, or nil.
    ///   - boundary: The boundary to use verbatim; nil for a random one.
    ///   - constructingBody: Appends parts; an error it throws fails the request.
    /// - Returns: The request with the streamed body, `Content-Type` and exact `Content-Length`.
    /// - Throws: `.requestSerializationFailed` for GET or HEAD, for parameters that cannot be walked, for a part the
    ///   form refused (`MultipartFormData.refusedPartError`), or wrapping the
    ///   block's error (a `ClientError` from the block is thrown as it is); `.badURL` for an unusable URL.
    public func multipartFormRequest(
        withMethod method: String, urlString: String, parameters: Parameters?,
        boundary: String? = nil,
        constructingBody: ((MultipartFormData) throws -> Void)?
    ) throws(ClientError) -> ClientRequest {
        guard let url = URL(string: urlString), url.scheme != nil else {
            throw ClientError(.badURL, failureReason: "Not an absolute URL: \(urlString)")
        }
        var request = ClientRequest(url: url, method: method)
        httpSerializer.applySettings(to: &request)
        return try multipartFormRequest(
            bySerializing: request, parameters: parameters, boundary: boundary,
            constructingBody: constructingBody)
    }

    /// `request` serialized without parameters and completed with the multipart body of `parameters` and the parts
    /// `constructingBody` appends (see `multipartFormRequest(withMethod:urlString:parameters:boundary:constructingBody:)`).
    public func multipartFormRequest(
        bySerializing request: ClientRequest, parameters: Parameters?, boundary: String? = nil,
        constructingBody: ((MultipartFormData) throws -> Void)?
    ) throws(ClientError) -> ClientRequest {
        let method = request.method.uppercased()
        guard method != "GET", method != "HEAD" else {
            throw ClientError(
                .requestSerializationFailed, failingURL: request.url,
                failureReason: "A multipart body cannot be sent with \(method).")
        }
        var serialized = try self.request(bySerializing: request, parameters: nil)
        let form = MultipartFormData(boundary: boundary)
        if let parameters {
            let pairs: [(name: String, value: QueryPairs.Value)]
            do {
                pairs = try QueryPairs.pairs(from: parameters)
            } catch {
                throw HTTPRequestSerializer.failure(error, request: request)
            }
            for pair in pairs {
                switch pair.value {
                case .text(let text): form.appendPart(formData: Data(text.utf8), name: pair.name)
                case .null: form.appendPart(formData: Data(), name: pair.name)
                case .data(let data): form.appendPart(formData: data, name: pair.name)
                }
            }
        }
        if let constructingBody {
            do {
                try constructingBody(form)
            } catch let error as ClientError {
                throw HTTPRequestSerializer.failure(error, request: request)
            } catch {
                throw ClientError(
                    .requestSerializationFailed, failingURL: request.url, underlying: error,
                    failureReason: "The multipart body block failed: \(error)")
            }
        }
        do throws(ClientError) {
            try form.checkNoPartWasRefused()
        } catch {
            throw HTTPRequestSerializer.failure(error, request: request)
        }
        form.attach(to: &serialized)
        return serialized
    }

    /// Writes `request`'s multipart body to `path` (created 0600, truncated) and returns the request without a body
    /// but with its `Content-Type` and `Content-Length`, to send with `uploadTask(with:fromFile:)` (AF's
    /// `requestWithMultipartFormRequest:writingStreamContentsToFile:`).
    /// - Throws: `.requestSerializationFailed` when the request has no multipart body; `.cannotWriteToFile` for an
    ///   I/O error; a part's `.fileNotReachable` or `.bodyLengthMismatch`.
    public func writeMultipartBody(of request: ClientRequest, toFile path: String) async throws(ClientError) -> ClientRequest {
        let type = request.value(forHTTPHeaderField: "Content-Type")?.lowercased() ?? ""
        guard type.hasPrefix("multipart/form-data"), let body = request.body, body.isStreamedOrComposite else {
            throw ClientError(
                .requestSerializationFailed, failingURL: request.url,
                failureReason: "The request has no multipart body to write to a file.")
        }
        do {
            try await MultipartFormData.write(body, to: path)
        } catch {
            throw HTTPRequestSerializer.failure(error, request: request)
        }
        var written = request
        written.body = nil
        return written
    }
}

extension RequestBody {
    /// Whether the body is one a multipart form makes: a stream, or pieces of data and files.
    var isStreamedOrComposite: Bool {
        switch self {
        case .stream, .composite: true
        case .data, .file: false
        }
    }
}
