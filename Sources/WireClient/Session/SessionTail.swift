/// WireClient's stages from redirects down to the exchange, composed into one stage: the last of every session
/// chain. Each stage keeps its own code in its feature's folder and still runs alone as a `TransferStage`; composed
/// here once, ahead of time (`Then`), their code runs in one async frame, where a chain of separate stages costs
/// every hop an async frame, an executor check and a copy of the chain per stage.
///
/// In order: redirects, the server's challenges, a proxy's, cookies, content decoding, then what lies below (`Below`).
/// A stage the configuration leaves without work (no proxy, no cookie storage, no decoding) passes each request
/// through. A class: the chain's list holds it as one reference, and the composition is read in place.
final class SessionTail: TransferStage {
    /// What follows content decoding.
    enum Below: RestOfChain {
        /// The exchange, which adds the session's fields and records the metrics itself.
        case exchange(ExchangeStage)
        /// With network stages: the session's fields, the metrics, the network stages and the exchange, one by one.
        case stages(TransferStages)

        @inline(__always) nonisolated(nonsending) func proceed(_ request: ClientRequest, in transfer: any TransferContext)
            async throws(ClientError) -> StageResponse
        {
            switch self {
            case .exchange(let exchange):
                return try await exchange.intercept(request, in: transfer, then: ChainEnd())
            case .stages(let stages):
                return try await TransferChain(request: request, stages: stages, transfer: transfer).proceed(request)
            }
        }
    }

    private let composed:
        Then<
            RedirectStage,
            Then<ChallengeStage, Then<ProxyChallengeStage, Then<CookieStage, Then<DecodingStage, Below>>>>
        >

    init(
        redirects: RedirectStage, challenges: ChallengeStage, proxyChallenges: ProxyChallengeStage, cookies: CookieStage,
        decoding: DecodingStage, below: Below
    ) {
        composed = Then(redirects, Then(challenges, Then(proxyChallenges, Then(cookies, Then(decoding, below)))))
    }

    nonisolated(nonsending) func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
        try await proceed(chain.request, in: chain.transfer)
    }

    /// The tail as the whole chain, inlined into its caller (the session's transfer, when no stage precedes it).
    @inline(__always) nonisolated(nonsending) func proceed(_ request: ClientRequest, in transfer: any TransferContext)
        async throws(ClientError) -> StageResponse
    {
        try await composed.proceed(request, in: transfer)
    }
}
