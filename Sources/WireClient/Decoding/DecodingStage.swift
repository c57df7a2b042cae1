import Wire

/// Content decoding, as a stage of the transfer chain: a response body with a `Content-Encoding` of gzip or
/// deflate is decoded as the task reads it (progress and `expectedContentLength` still count the encoded bytes on
/// the wire, as URLSession's do). The request side, offering `Accept-Encoding: gzip, deflate`, is the session's
/// fields (`SessionConfiguration.decodesContent`).
///
/// Decoding is skipped, and the bytes pass through, for responses that have no body (HEAD, 1xx, 204, 304), for a
/// 206 (a byte range of the encoded representation cannot be decoded on its own), and for a coding WireClient did
/// not offer when the caller chose `Accept-Encoding` itself; any other coding fails the task with
/// `.cannotDecodeContentData` when its body is read. Without limits (a session that does not decode content) every
/// body passes through.
struct DecodingStage: ComposableStage {
    /// The decompression-bomb limits; nil when the session does not decode content.
    let limits: ContentDecodingLimits?
    /// Whether the session's additional fields choose `Accept-Encoding` (then an unknown coding passes through).
    let sessionChoosesCodings: Bool

    @inline(__always) nonisolated(nonsending) func intercept<Rest: RestOfChain>(
        _ request: ClientRequest, in transfer: any TransferContext, then rest: Rest
    ) async throws(ClientError) -> StageResponse {
        var answer = try await rest.proceed(request, in: transfer)
        // The common case, no `Content-Encoding`, costs one scan of the field names.
        guard let limits, case .wire(let body) = answer.body.content,
            answer.response.hasField(named: "Content-Encoding"),
            DecodingBodySource.mayDecode(answer.response, method: answer.request.method)
        else { return answer }
        let coding: ContentCoding
        var refusal: ContentDecodingError?
        do throws(ContentDecodingError) {
            coding = try ContentCoding(headers: answer.response.headers)
        } catch {
            coding = .identity
            let callerChose = answer.request.headers.contains(name: "Accept-Encoding") || sessionChoosesCodings
            guard !callerChose else { return answer }
            refusal = error
        }
        guard coding != .identity || refusal != nil else { return answer }
        answer.body = ResponseBody(
            .source(
                DecodingBodySource(
                    body: body, response: answer.response, request: answer.request,
                    coding: coding, limits: limits, refusal: refusal)))
        return answer
    }
}
