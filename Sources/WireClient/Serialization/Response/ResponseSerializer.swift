import FoundationEssentials

/// Validates a response and turns its body into a value (AFURLResponseSerialization).
///
/// `serialize` returns a value and an error independently: a bad status with a valid JSON body yields both, and the
/// plain data serializer returns the body even when it is invalid. Every error carries the response, the raw body and
/// the URL.
public protocol ResponseSerializer: Sendable {
    /// Acceptable status codes; nil accepts any.
    var acceptableStatusCodes: Set<Int>? { get set }
    /// Acceptable media types (compared case-insensitively); nil accepts any.
    var acceptableContentTypes: Set<String>? { get set }

    /// The value of `data` received with `response`, and the validation or parse error.
    /// - Parameters:
    ///   - response: The response, nil when the transfer produced none.
    ///   - data: The body.
    /// - Returns: The value and the error.
    func serialize(response: ClientResponse?, data: Data?) -> SerializedResponse
}

/// The 2xx range AFNetworking accepts by default (`NSMakeRange(200, 100)`).
let successfulStatusCodes = Set(200..<300)

extension ResponseSerializer {
    /// Checks `response` against the acceptable status codes and content types.
    ///
    /// The media type is `Content-Type` up to `;`, trimmed and lower-cased. A response with an empty body is never
    /// rejected for its content type; a non-empty body without a `Content-Type` is, when a set is configured. A status
    /// failure is `.unacceptableStatusCode`; a content-type failure `.unacceptableContentType`; both give the status
    /// error with the content-type error as `underlying`. Without a response nothing is checked.
    /// - Parameters:
    ///   - response: The response.
    ///   - data: The body.
    /// - Returns: The error, or nil when the response is acceptable.
    public func validate(response: ClientResponse?, data: Data?) -> ClientError? {
        guard let response else { return nil }
        var contentTypeError: ClientError?
        if let acceptableContentTypes, let data, !data.isEmpty {
            let mimeType = response.mimeType
            let accepted = mimeType.map { type in acceptableContentTypes.contains { $0.lowercased() == type } } ?? false
            if !accepted {
                contentTypeError = ClientError(.unacceptableContentType(mimeType), response: response, responseData: data)
            }
        }
        if acceptableStatusCodes?.contains(response.statusCode) == false {
            return ClientError(
                .unacceptableStatusCode(response.statusCode), response: response, responseData: data ?? Data(),
                underlying: contentTypeError)
        }
        return contentTypeError
    }

    /// The frame every body-parsing serializer shares: validate; a content-type failure stops (value nil); an empty
    /// body (and, with `singleSpaceIsEmpty`, a body of exactly one space) is nil with the validation error alone;
    /// otherwise `parse`'s value with the validation error, or, when `parse` throws, `.responseSerializationFailed`
    /// chained to the validation error.
    /// - Parameters:
    ///   - response: The response.
    ///   - data: The body.
    ///   - singleSpaceIsEmpty: Whether a one-space body counts as empty (Rails' `head :ok`, for JSON).
    ///   - parse: Turns a non-empty body into the value.
    /// - Returns: The value or nil, and the error.
    func serializeBody(
        response: ClientResponse?, data: Data?, singleSpaceIsEmpty: Bool = false,
        _ parse: (Data) throws -> (any Sendable)?
    ) -> SerializedResponse {
        let validation = validate(response: response, data: data)
        if let validation, validation.hasContentTypeFailure { return (nil, validation) }
        guard let data, !data.isEmpty, !(singleSpaceIsEmpty && data == Data([0x20])) else { return (nil, validation) }
        do {
            return (try parse(data), validation)
        } catch {
            return (nil, .parseFailure(error, response: response, data: data, validation: validation))
        }
    }
}

extension ClientError {
    /// Whether this error or one under it is a content-type failure (which stops parsing).
    var hasContentTypeFailure: Bool {
        var error: ClientError? = self
        while let current = error {
            if case .unacceptableContentType = current.code { return true }
            error = current.underlying as? ClientError
        }
        return false
    }

    /// A parse failure for `data` received with `response`, chained to the validation error when there is one.
    static func parseFailure(_ cause: any Error, response: ClientResponse?, data: Data, validation: ClientError?) -> ClientError {
        ClientError(
            .responseSerializationFailed,
            failingURL: response?.url,
            response: response,
            responseData: data,
            underlying: validation ?? cause,
            failureReason: "The response body could not be parsed: \(cause)"
        )
    }
}
