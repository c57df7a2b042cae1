import FoundationEssentials
import Wire

/// The task's side of authentication challenges: whether a hook answers them, and its answer. The session
/// implements it; the stage asks only when a 401 or 407 arrives.
protocol ChallengeAnswering: TransferContext {
    /// Whether the session has a challenge hook (`taskDidReceiveAuthenticationChallenge`).
    var answersChallenges: Bool { get }
    /// The hook's answer to `challenge`, on the delegate queue, with the idle timeout held.
    nonisolated(nonsending) func answer(_ challenge: AuthenticationChallenge) async -> AuthenticationChallengeDisposition
}

/// Authentication challenges, as a stage of the transfer chain: a 401 with a challenge is
/// offered to the session's challenge hook, whose answer (a user and password sent as Basic, a header value of the
/// caller's, or the credential storage's entry for the protection space) is sent on the same request; the hop is
/// replayed with `Authorization`. A proxy's 407 is `ProxyChallengeStage`'s.
///
/// An answer refused once for a protection space is not sent again (the response is delivered), `previousFailureCount`
/// counts the refusals per space, and at most eight replays are made, so a hook that invents a new answer every time
/// cannot loop for ever. Without a hook, a 401 is delivered as it is.
struct ChallengeStage: ComposableStage {
    /// Where `.performDefaultHandling` looks for a credential.
    let credentialStorage: CredentialStorage?

    /// What the hop has answered to challenges so far.
    struct Ledger {
        /// Refused answers per protection space, for `previousFailureCount`.
        var failures: [ProtectionSpace: Int] = [:]
        /// The header values already sent per protection space: none is sent twice.
        var sent: [ProtectionSpace: Set<String>] = [:]
        /// Replays so far.
        var replays = 0
        /// Uses of each Digest nonce so far, for the nonce count (`nc`) of the next answer with it.
        var nonceUses: [String: Int] = [:]
        static let maximumReplays = 8
    }

    @inline(__always) nonisolated(nonsending) func intercept<Rest: RestOfChain>(
        _ request: ClientRequest, in transfer: any TransferContext, then rest: Rest
    ) async throws(ClientError) -> StageResponse {
        var request = request
        // Made at the first challenge: most hops have none, and an empty ledger is three dictionaries made and freed.
        var ledger: Ledger?
        while true {
            let answer = try await rest.proceed(request, in: transfer)
            let status = answer.response.statusCode
            // Every response passes here: the status first, the task's hooks only for a challenge.
            guard status == 401, let host = transfer as? any ChallengeAnswering,
                host.answersChallenges, let next = await reply(to: answer, host: host, ledger: &ledger)
            else {
                return answer
            }
            guard let next else { throw host.cancelTask() }
            await answer.body.discard()
            host.setCurrentRequest(next)
            request = next
        }
    }

    /// The request that answers the challenge in `answer`; nil delivers the response as it is; `.some(nil)`: the hook
    /// cancelled the task.
    nonisolated(nonsending) private func reply(
        to answer: StageResponse, host: any ChallengeAnswering,
        ledger: inout Ledger?
    ) async -> ClientRequest?? {
        let request = answer.request
        guard let challenge = AuthenticationChallenge.parse(answer.response, url: request.url, previousFailureCount: 0)
        else { return nil }
        // A Digest answer covers the method and the request target as Wire sends them.
        let target = request.wireURL?.value.target ?? (try? HTTPURL(request.url.absoluteString))?.target ?? request.url.path
        let digestRequest = (method: request.method.uppercased(), uri: target)
        var current = ledger ?? Ledger()
        let decision = await Self.decide(
            challenge, host: host, credentialStorage: credentialStorage, ledger: &current, digestRequest: digestRequest)
        ledger = current
        switch decision {
        case .deliver:
            return nil
        case .cancel:
            return .some(nil)
        case .send(let value):
            var next = request
            next.headers.remove(name: "Authorization")
            next.headers.add(name: "Authorization", value: value)
            return .some(next)
        }
    }

    /// What to do with a challenge.
    enum Reply {
        /// Deliver the response (or the failure) as it is.
        case deliver
        /// The hook cancelled the task.
        case cancel
        /// Send the request again with this authorization value.
        case send(String)
    }

    /// The hook's (or the credential storage's) answer to `challenge`, counted in `ledger`: the refusals of earlier
    /// answers for its protection space become its `previousFailureCount`, and an answer already sent for the space,
    /// or one beyond the replay limit, delivers the response.
    ///
    /// A user and password answer a Digest challenge (`challenge.digest`) with a Digest value for `digestRequest`'s
    /// method and target; anything else is sent as Basic.
    nonisolated(nonsending) static func decide(
        _ challenge: AuthenticationChallenge, host: any ChallengeAnswering, credentialStorage: CredentialStorage?,
        ledger: inout Ledger, digestRequest: (method: String, uri: String)? = nil
    ) async -> Reply {
        guard ledger.replays < Ledger.maximumReplays else { return .deliver }
        var challenge = challenge
        let space = challenge.protectionSpace
        // A challenge after an answer was sent for this space means that answer was refused, unless it is a Digest
        // challenge saying only that the nonce went stale (RFC 7616 §3.3).
        let isStale = challenge.digest?.isStale == true
        if let sent = ledger.sent[space], !sent.isEmpty, !isStale { ledger.failures[space, default: 0] += 1 }
        challenge.previousFailureCount = ledger.failures[space, default: 0]
        /// The answer a user and password make (Digest to a Digest challenge, else Basic), and what identifies it
        /// among those sent: a Digest value differs each time by its client nonce, so its credentials do.
        func credentialAnswer(user: String, password: String) -> (value: String, key: String) {
            guard let digest = challenge.digest, let digestRequest else {
                let value = basicAuthorization(user: user, password: password)
                return (value, value)
            }
            let count = ledger.nonceUses[digest.nonce, default: 0] + 1
            ledger.nonceUses[digest.nonce] = count
            let value = digest.authorization(
                user: user, password: password, method: digestRequest.method, uri: digestRequest.uri, nonceCount: count)
            return (value, "Digest \(user):\(password)")
        }
        let value: String
        let key: String
        switch await host.answer(challenge) {
        case .useCredential(let user, let password):
            (value, key) = credentialAnswer(user: user, password: password)
        case .useAuthorization(let header):
            (value, key) = (header, header)
        case .performDefaultHandling:
            guard let stored = credentialStorage?.credential(for: space) else { return .deliver }
            (value, key) = credentialAnswer(user: stored.user, password: stored.password)
        case .cancel:
            return .cancel
        case .rejectProtectionSpace:
            return .deliver
        }
        // The same answer refused once for this space is not sent again: the response is delivered. The credentials
        // of a Digest answer whose nonce only went stale are sent again, with the new nonce (within the replay limit).
        guard ledger.sent[space, default: []].insert(key).inserted || isStale else { return .deliver }
        ledger.replays += 1
        return .send(value)
    }

    /// `Basic` with the base64 of `user:password` (RFC 7617, UTF-8).
    static func basicAuthorization(user: String, password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}
