/// The exchange through Wire, the chain's last stage: the session's client sends the request and returns the
/// response head, its body unread. It never proceeds.
struct ExchangeStage: ComposableStage {
    /// The session's fields, when this stage adds them and records the metrics itself (a chain without network
    /// stages, where `SessionFieldsStage` and `MetricsStage` would sit right above it); nil when they are stages.
    let sessionFields: SessionFields?

    @inline(__always) nonisolated(nonsending) func intercept<Rest: RestOfChain>(
        _ request: ClientRequest, in transfer: any TransferContext, then rest: Rest
    ) async throws(ClientError) -> StageResponse {
        // The session's fields go to Wire only: the request keeps its own (a changed copy would copy all its values).
        let fields = sessionFields.map { $0.fields(over: request.headers) } ?? request.headers
        // A session's transfer context is its task's delegate: named, its exchange runs in this stage's frame instead
        // of behind the protocol's witness (an async call and a frame of its own per hop).
        guard let delegate = transfer as? TaskDelegate else {
            let answer = try await transfer.exchange(request, fields: fields)
            if sessionFields != nil { transfer.record(answer.response, metrics: answer.exchangeMetrics) }
            return answer
        }
        let answer = try await delegate.manager.exchange(request, fields: fields, for: delegate)
        if sessionFields != nil { delegate.record(answer.response, metrics: answer.exchangeMetrics) }
        return answer
    }
}
