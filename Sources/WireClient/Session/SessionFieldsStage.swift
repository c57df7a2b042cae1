/// The session's fields, as a stage of the transfer chain: each of `httpAdditionalHeaders` the request lacks, then
/// `Accept-Encoding` when the session decodes content (`SessionFields`). Just above the network stages, so that they
/// see every field as it goes out; the stages above keep the request without them, as the caller made it.
struct SessionFieldsStage: TransferStage {
    let fields: SessionFields

    nonisolated(nonsending) func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
        var sent = chain.request
        sent.headers = fields.fields(over: sent.headers)
        var answer = try await chain.proceed(sent)
        answer.request = chain.request
        return answer
    }
}
