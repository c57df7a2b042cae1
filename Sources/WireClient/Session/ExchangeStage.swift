/// The exchange through Wire, the chain's last stage: the session's client sends the request and returns the
/// response head, its body unread. It never proceeds.
struct ExchangeStage: TransferStage {
    /// The session's fields, when this stage adds them and records the metrics itself (a chain without network
    /// stages, where `SessionFieldsStage` and `MetricsStage` would sit right above it); nil when they are stages.
    let sessionFields: SessionFields?

    @inline(__always) nonisolated(nonsending) func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
        let request = chain.request
        guard let sessionFields else { return try await chain.transfer.exchange(request, fields: request.headers) }
        // The session's fields go to Wire only: the request keeps its own (a changed copy would copy all its values).
        let answer = try await chain.transfer.exchange(request, fields: sessionFields.fields(over: request.headers))
        chain.transfer.record(answer.response, metrics: answer.exchangeMetrics)
        return answer
    }
}
