import Wire

/// Retries and interceptors, as a stage of the transfer chain: each attempt sends the task's original request
/// through the adapters (a credential, a signature), runs the rest of the chain and receives the body; a failed
/// attempt (a transport error, a body that broke, or a status the response serializer would refuse) goes to the
/// retriers, which may send it again, after a delay, or replace its error. A retried attempt starts again from the
/// original request (redirects followed again, the adapters run again) and its progress from zero. Present in the
/// chain only when the manager or the request has an interceptor.
struct RetryStage: TransferStage {
    /// The manager's interceptor, then the request's.
    let interceptors: InterceptorChain
    /// The statuses the response serializer accepts (nil: any), read when the task started.
    let acceptableStatusCodes: Set<Int>?

    @inline(__always) nonisolated(nonsending) func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
        let transfer = chain.transfer
        var attempt = 0
        while true {
            if let reason = transfer.cancelReason { throw reason }
            let adapted = try await adapt(chain.request, transfer)
            transfer.beginAttempt(with: adapted)
            let answer: StageResponse?
            let failure: ClientError
            do {
                let received = await transfer.receive(try await chain.proceed(adapted))
                guard transfer.cancelReason == nil, let body = received.body.received, body.replacement == nil,
                    let failed = self.failure(of: received, body)
                else { return received }
                (answer, failure) = (received, failed)
            } catch {
                guard transfer.cancelReason == nil else { throw error }
                (answer, failure) = (nil, error)
            }
            attempt += 1
            transfer.holdIdle()
            let decision = await interceptors.retry(
                transfer.currentRequest, attempt: attempt,
                response: answer?.response ?? transfer.recordedResponse, error: failure)
            let delay: Duration
            switch decision {
            case .doNotRetry:
                transfer.releaseIdle()
                return try Self.deliver(answer, failing: failure, with: nil)
            case .doNotRetryWithError(let error):
                transfer.releaseIdle()
                return try Self.deliver(answer, failing: failure, with: error)
            case .retry:
                delay = .zero
            case .retryAfter(let wait):
                delay = wait
            }
            if let file = answer?.body.received?.temporaryFile {
                try? await AsyncFile.remove(file)
            }
            if delay > .zero { await transfer.pause(for: delay) }
            transfer.releaseIdle()
        }
    }

    /// The request the adapters make of `request`, with the idle timeout held while they run.
    /// - Throws: An adapter's error (a `ClientError` as it is, anything else as `.requestSerializationFailed`), or the
    ///   task's cancellation.
    nonisolated(nonsending) private func adapt(_ request: ClientRequest, _ transfer: any TransferContext)
        async throws(ClientError)
        -> ClientRequest
    {
        transfer.holdIdle()
        defer { transfer.releaseIdle() }
        do {
            return try await interceptors.adapt(request)
        } catch {
            let failure =
                error as? ClientError
                ?? ClientError(
                    .requestSerializationFailed, failingURL: request.url, underlying: error,
                    failureReason: "an adapter refused the request")
            throw transfer.cancelReason(after: error) ?? failure
        }
    }

    /// What a retrier is asked about: the body's error, or, for a response the serializer's status validation would
    /// refuse, `.unacceptableStatusCode` carrying it; nil for an attempt that succeeded.
    private func failure(of answer: StageResponse, _ body: ReceivedBody) -> ClientError? {
        if let error = body.error { return error }
        let status = answer.response.statusCode
        guard let acceptableStatusCodes, !acceptableStatusCodes.contains(status) else { return nil }
        return ClientError(
            .unacceptableStatusCode(status), failingURL: answer.response.url, response: answer.response,
            responseData: body.data, failureReason: "status \(status)")
    }

    /// The attempt that is kept: its response with `replacement` as the error when one is given (a failed status
    /// keeps its error for the serializer to find again), or, for an attempt that threw, the error.
    private static func deliver(
        _ answer: StageResponse?, failing failure: ClientError,
        with replacement: ClientError?
    ) throws(ClientError) -> StageResponse {
        guard var answer else { throw replacement ?? failure }
        if let replacement, var body = answer.body.received {
            body.error = replacement
            answer.body = ResponseBody(received: body)
        }
        return answer
    }
}
