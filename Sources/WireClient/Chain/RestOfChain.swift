/// The stages after a running one, as WireClient's own stages call them: a `TransferChain` (the stages one by one,
/// each behind `TransferStage`), or the stages the session composes ahead of time (`SessionTail`).
///
/// WireClient's stages are generic over it (`ComposableStage`): composed, their code runs in one async frame, where
/// a chain of separate stages costs every hop a frame, an executor check and a copy of the chain per stage.
package protocol RestOfChain {
    /// The task's side of the transfer.
    var transfer: any TransferContext { get }
    /// Runs the rest of the chain for `request` and returns what comes back up.
    nonisolated(nonsending) func proceed(_ request: ClientRequest) async throws(ClientError) -> StageResponse
}

extension TransferChain: RestOfChain {}

/// A stage of WireClient's own, written once for any rest of the chain: run alone as a `TransferStage`, or composed
/// with the stages after it (`SessionTail`).
package protocol ComposableStage: TransferStage {
    /// The response to `request`, from `rest` (once, several times, or not at all), as `intercept(_:)` gives it.
    nonisolated(nonsending) func intercept<Rest: RestOfChain>(_ request: ClientRequest, then rest: Rest)
        async throws(ClientError) -> StageResponse
}

extension ComposableStage {
    /// The stage alone, in a chain of separate stages.
    nonisolated(nonsending) package func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
        try await intercept(chain.request, then: chain)
    }
}
