import Synchronization
import Wire

/// One session of a manager: the Wire client its tasks run on. `invalidateSession(resetSession: true)` starts a new
/// generation (a new pool) while the old one drains. The client is made on first use, so making a manager cannot
/// fail; a client that cannot start fails the task that needed it.
final class SessionGeneration: Sendable {
    /// 0 for the manager's first session, then 1, 2, …
    let number: Int
    private let configuration: HTTPClientConfiguration
    private let adopted: HTTPClient?
    private let made = Mutex<Result<HTTPClient, HTTPClientError>?>(nil)

    init(number: Int, configuration: SessionConfiguration) {
        self.number = number
        self.configuration = configuration.clientConfiguration
        adopted = configuration.httpClient
    }

    /// The client: the adopted one, or the generation's own (made now if it was not yet).
    func client() throws(HTTPClientError) -> HTTPClient {
        if let adopted { return adopted }
        let result = made.withLock { made -> Result<HTTPClient, HTTPClientError> in
            if let made { return made }
            let result = Result { () throws(HTTPClientError) -> HTTPClient in try HTTPClient(configuration: configuration) }
            made = result
            return result
        }
        return try result.get()
    }

    /// The client the generation made itself, if it made one (an adopted client is never shut down by the session).
    var ownClient: HTTPClient? {
        made.withLock { made in
            if case .success(let client) = made { client } else { nil }
        }
    }

    /// Shuts the generation's own client down (its pooled connections close); nothing for an adopted client.
    func shutdown() async {
        await ownClient?.shutdown()
    }
}
