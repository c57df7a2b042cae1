/// One step of a task's transfer: it takes the request and the rest of the chain, and returns the response (or
/// throws), as an OkHttp interceptor does.
///
/// A stage may pass the request on unchanged (`chain.proceed(chain.request)`), rewrite it, answer without calling
/// the rest of the chain (a canned or cached response), call the rest more than once (a retry, a redirect, a
/// challenge's replay), or change the response on its way back. Each of WireClient's features is a stage in its own
/// folder; the session assembles them in one place, in the order the WireClient catalog's article "The transfer
/// chain" shows, and a user's stages go in at two points of that order:
/// `SessionConfiguration.applicationStages` and `SessionConfiguration.networkStages`.
///
/// ```swift
/// struct Timing: TransferStage {
///     func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
///         let start = ContinuousClock.now
///         let answer = try await chain.proceed(chain.request)
///         print(chain.request.url, answer.response.statusCode, ContinuousClock.now - start)
///         return answer
///     }
/// }
/// ```
public protocol TransferStage: Sendable {
    /// The response to `chain.request`.
    /// - Parameter chain: The request this stage is asked for, and the stages after it.
    /// - Throws: A `ClientError` that fails the task (or the attempt, under a retry policy).
    nonisolated(nonsending) func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse
}
