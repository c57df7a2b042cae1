/// Metrics, as a stage of the transfer chain: each hop's response head and its exchange's record in Wire are kept
/// for the task, so a transfer that fails after a head (too many redirects, a body that breaks, a cancelled
/// challenge) still completes with the last response and its timings. Just above the network stages and the
/// exchange: what it records is what the network gave.
struct MetricsStage: TransferStage {
    @inline(__always) nonisolated(nonsending) func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
        let answer = try await chain.proceed(chain.request)
        chain.transfer.record(answer.response, metrics: answer.exchangeMetrics)
        return answer
    }
}
