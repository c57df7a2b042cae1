/// The session's fields, as a stage of the transfer chain: each of `httpAdditionalHeaders` the request lacks, then
/// `Accept-Encoding` when the session decodes content (`SessionFields`). Just above the network stages, so that they
/// see every field as it goes out; the stages above keep the request without them, as the caller made it.
struct SessionFieldsStage: TransferStage {
    let fields: SessionFields

    @inline(__always) nonisolated(nonsending) func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
        var answer = try await chain.proceed(Self.adding(fields, to: chain.request))
        answer.request = chain.request
        return answer
    }

    /// `request` as it goes out: with the session's fields it lacks.
    static func adding(_ fields: SessionFields, to request: ClientRequest) -> ClientRequest {
        var sent = request
        sent.headers = fields.fields(over: sent.headers)
        return sent
    }
}
