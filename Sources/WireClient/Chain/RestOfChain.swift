/// The stages after a running one, as WireClient's own stages call them: a `TransferChain` (the stages one by one,
/// each behind `TransferStage`), or stages composed ahead of time (`Then`, as `SessionTail` composes them).
///
/// WireClient's stages are generic over it (`ComposableStage`): composed, their code runs in one async frame, where
/// a chain of separate stages costs every hop a frame, an executor check and a copy of the chain per stage.
package protocol RestOfChain: Sendable {
    /// Runs the rest of the chain for `request`, for the task whose side of the transfer is `transfer`, and returns
    /// what comes back up.
    nonisolated(nonsending) func proceed(_ request: ClientRequest, in transfer: any TransferContext)
        async throws(ClientError) -> StageResponse
}

extension TransferChain: RestOfChain {
    /// The rest of this chain (which carries its own transfer, the same as `transfer`).
    @inline(__always) nonisolated(nonsending) package func proceed(
        _ request: ClientRequest, in transfer: any TransferContext
    ) async throws(ClientError) -> StageResponse {
        try await proceed(request)
    }
}

/// A stage of WireClient's own, written once for any rest of the chain: run alone as a `TransferStage`, or composed
/// with the stages after it (`Then`).
package protocol ComposableStage: TransferStage {
    /// The response to `request`, from `rest` (once, several times, or not at all), as `intercept(_:)` gives it.
    /// - Parameters:
    ///   - request: The request this stage is asked for.
    ///   - transfer: The task's side of the transfer.
    ///   - rest: The stages after this one.
    nonisolated(nonsending) func intercept<Rest: RestOfChain>(
        _ request: ClientRequest, in transfer: any TransferContext, then rest: Rest
    ) async throws(ClientError) -> StageResponse
}

extension ComposableStage {
    /// The stage alone, in a chain of separate stages.
    nonisolated(nonsending) package func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
        try await intercept(chain.request, in: chain.transfer, then: chain)
    }
}

/// `stage`, then `rest`: the rest of a chain with one more stage in front, composed ahead of time. Made once (a
/// session makes its tail when it is created) and passed on by reference to itself: each `proceed` is inlined into the
/// stage above it, so a composition compiles into its first stage's one frame.
package struct Then<Stage: ComposableStage, Rest: RestOfChain>: RestOfChain {
    let stage: Stage
    let rest: Rest

    package init(_ stage: Stage, _ rest: Rest) {
        self.stage = stage
        self.rest = rest
    }

    @inline(__always) nonisolated(nonsending) package func proceed(
        _ request: ClientRequest, in transfer: any TransferContext
    ) async throws(ClientError) -> StageResponse {
        try await stage.intercept(request, in: transfer, then: rest)
    }
}

/// The rest after a chain's last stage, which answers without proceeding (the exchange): asked anyway, it fails the
/// task as a `TransferChain` with no stage left does.
package struct ChainEnd: RestOfChain {
    package init() {}

    nonisolated(nonsending) package func proceed(_ request: ClientRequest, in transfer: any TransferContext)
        async throws(ClientError) -> StageResponse
    {
        throw TransferChain.noStageLeft(for: request)
    }
}
