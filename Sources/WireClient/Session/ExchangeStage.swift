/// The exchange through Wire, the chain's last stage: the session's client sends the request and returns the
/// response head, its body unread. It never proceeds.
struct ExchangeStage: TransferStage {
    /// The session's fields, when this stage adds them and records the metrics itself (a chain without network
    /// stages, where `SessionFieldsStage` and `MetricsStage` would sit right above it); nil when they are stages.
    let sessionFields: SessionFields?

    @inline(__always) nonisolated(nonsending) func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
        guard let sessionFields else { return try await chain.transfer.exchange(chain.request) }
        var answer = try await chain.transfer.exchange(SessionFieldsStage.adding(sessionFields, to: chain.request))
        answer.request = chain.request
        chain.transfer.record(answer.response, metrics: answer.exchangeMetrics)
        return answer
    }
}
