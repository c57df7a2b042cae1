/// WireClient's stages from redirects down to the exchange, composed into one stage: the last of every session
/// chain. Each stage keeps its own code in its feature's folder and still runs alone as a `TransferStage`; composed
/// here, ahead of time, their code runs in one async frame, where a chain of separate stages costs every hop an
/// async frame, an executor check and a copy of the chain per stage.
///
/// In order: redirects, the server's challenges, a proxy's, cookies, content decoding, then what lies below (`Below`).
/// A stage the configuration leaves without work (no proxy, no cookie storage, no decoding) passes each request
/// through.
final class SessionTail: TransferStage {
    /// What follows content decoding.
    enum Below: Sendable {
        /// The exchange, which adds the session's fields and records the metrics itself.
        case exchange(ExchangeStage)
        /// With network stages: the session's fields, the metrics, the network stages and the exchange, one by one.
        case stages(TransferStages)
    }

    let redirects: RedirectStage
    let challenges: ChallengeStage
    let proxyChallenges: ProxyChallengeStage
    let cookies: CookieStage
    let decoding: DecodingStage
    let below: Below

    init(
        redirects: RedirectStage, challenges: ChallengeStage, proxyChallenges: ProxyChallengeStage, cookies: CookieStage,
        decoding: DecodingStage, below: Below
    ) {
        self.redirects = redirects
        self.challenges = challenges
        self.proxyChallenges = proxyChallenges
        self.cookies = cookies
        self.decoding = decoding
        self.below = below
    }

    nonisolated(nonsending) func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
        try await redirects.intercept(chain.request, then: AfterRedirects(tail: self, transfer: chain.transfer))
    }

    // The rest of the tail after each stage. Each holds the tail (one reference) rather than the stages after it, and
    // each `proceed` is inlined into the stage above: the whole tail compiles into `intercept`'s one frame.

    struct AfterRedirects: RestOfChain {
        let tail: SessionTail
        let transfer: any TransferContext

        @inline(__always) nonisolated(nonsending) func proceed(_ request: ClientRequest) async throws(ClientError)
            -> StageResponse
        {
            try await tail.challenges.intercept(request, then: AfterChallenges(tail: tail, transfer: transfer))
        }
    }

    struct AfterChallenges: RestOfChain {
        let tail: SessionTail
        let transfer: any TransferContext

        @inline(__always) nonisolated(nonsending) func proceed(_ request: ClientRequest) async throws(ClientError)
            -> StageResponse
        {
            try await tail.proxyChallenges.intercept(request, then: AfterProxyChallenges(tail: tail, transfer: transfer))
        }
    }

    struct AfterProxyChallenges: RestOfChain {
        let tail: SessionTail
        let transfer: any TransferContext

        @inline(__always) nonisolated(nonsending) func proceed(_ request: ClientRequest) async throws(ClientError)
            -> StageResponse
        {
            try await tail.cookies.intercept(request, then: AfterCookies(tail: tail, transfer: transfer))
        }
    }

    struct AfterCookies: RestOfChain {
        let tail: SessionTail
        let transfer: any TransferContext

        @inline(__always) nonisolated(nonsending) func proceed(_ request: ClientRequest) async throws(ClientError)
            -> StageResponse
        {
            try await tail.decoding.intercept(request, then: AfterDecoding(tail: tail, transfer: transfer))
        }
    }

    struct AfterDecoding: RestOfChain {
        let tail: SessionTail
        let transfer: any TransferContext

        @inline(__always) nonisolated(nonsending) func proceed(_ request: ClientRequest) async throws(ClientError)
            -> StageResponse
        {
            switch tail.below {
            case .exchange(let exchange):
                return try await exchange.intercept(request, then: self)
            case .stages(let stages):
                return try await TransferChain(request: request, stages: stages, transfer: transfer).proceed(request)
            }
        }
    }
}
