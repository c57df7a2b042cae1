/// The exchange through Wire, the chain's last stage: the session's client sends the request and returns the
/// response head, its body unread. It never proceeds.
struct ExchangeStage: TransferStage {
    nonisolated(nonsending) func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
        try await chain.transfer.exchange(chain.request)
    }
}
