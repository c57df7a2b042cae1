import FoundationEssentials
import Wire

/// What a task has answered to authentication challenges so far (§13.2 item 7).
struct ChallengeLedger {
    /// Refused answers per protection space, for `previousFailureCount`.
    var failures: [ProtectionSpace: Int] = [:]
    /// The header values already sent per protection space: none is sent twice.
    var sent: [ProtectionSpace: Set<String>] = [:]
    /// Replays so far: a hook that invents a new answer every time cannot loop for ever.
    var replays = 0
    static let maximumReplays = 8
}

extension SessionManager {
    /// What to do after a challenge.
    enum ChallengeAnswer {
        /// Send this request (the same URL, with the answer's header).
        case replay(ClientRequest)
        /// Fail the task with `.cancelled`.
        case cancel
    }

    /// Asks the hook (then the credential store) about a 401 or 407 challenge; nil delivers the response as it is.
    @inline(never)  // Its own async frame, allocated only when called (`transfer`).
    func answerChallenge(_ response: ClientResponse, to request: ClientRequest, of task: SessionTask, idle: IdleTimer,
                         ledger: inout ChallengeLedger) async -> ChallengeAnswer? {
        guard let hook = hooks.taskDidReceiveAuthenticationChallenge, ledger.replays < ChallengeLedger.maximumReplays else {
            return nil
        }
        let probe = AuthenticationChallenge.parse(response, url: request.url, previousFailureCount: 0)
        guard let space = probe?.protectionSpace, var challenge = probe else { return nil }
        // A challenge after an answer was sent for this space means that answer was refused.
        if let sent = ledger.sent[space], !sent.isEmpty { ledger.failures[space, default: 0] += 1 }
        challenge.previousFailureCount = ledger.failures[space, default: 0]
        let offer = challenge
        let disposition = await askCaller(idle) { hook(task, offer) }
        let value: String
        switch disposition {
        case .useCredential(let user, let password):
            value = Self.basicAuthorization(user: user, password: password)
        case .useAuthorization(let header):
            value = header
        case .performDefaultHandling:
            guard let stored = configuration.credentialStorage?.credential(for: space) else { return nil }
            value = Self.basicAuthorization(user: stored.user, password: stored.password)
        case .cancel:
            return .cancel
        case .rejectProtectionSpace:
            return nil
        }
        // The same answer refused once for this space is not sent again: the response is delivered.
        guard ledger.sent[space, default: []].insert(value).inserted else { return nil }
        ledger.replays += 1
        var next = request
        let field = space.isProxy ? "Proxy-Authorization" : "Authorization"
        next.headers.remove(name: field)
        next.headers.add(name: field, value: value)
        return .replay(next)
    }

    /// `Basic` with the base64 of `user:password` (RFC 7617, UTF-8).
    static func basicAuthorization(user: String, password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}
