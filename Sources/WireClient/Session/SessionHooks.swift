import FoundationEssentials
import Wire
import WireTLS

/// What a data task does once its response head arrived (NSURLSessionResponseDisposition).
public enum ResponseDisposition: Sendable, Hashable {
    /// Go on receiving the body (the default).
    case allow
    /// Stop: the task fails with `.cancelled`.
    case cancel
    /// Receive the body into a file: a new download task (told to `dataTaskDidBecomeDownloadTask`) takes over the
    /// exchange and the completion handler; the data task ends without completing.
    case becomeDownload
}

/// The session-level hooks of a `SessionManager` (AFURLSessionManager's blocks), every one optional. They run on the
/// manager's serial delegate queue, never on an event loop and never under a WireClient lock.
struct SessionHooks: Sendable {
    var sessionDidBecomeInvalid: (@Sendable (ClientError?) -> Void)?
    var sessionDidReceiveServerTrustChallenge: (@Sendable (TrustContext) -> ServerTrustDisposition)?
    var taskWillPerformHTTPRedirection: (@Sendable (SessionTask, ClientResponse, ClientRequest) -> ClientRequest?)?
    var taskNeedNewBodyStream: (@Sendable (SessionTask) -> RequestBody?)?
    var taskDidSendBodyData: (@Sendable (SessionTask, Int64, Int64, Int64) -> Void)?
    var taskDidComplete: (@Sendable (SessionTask, ClientError?) -> Void)?
    var taskDidFinishCollectingMetrics: (@Sendable (SessionTask, HTTPClientMetrics.Snapshot) -> Void)?
    var dataTaskDidReceiveResponse: (@Sendable (SessionTask, ClientResponse) -> ResponseDisposition)?
    var dataTaskDidBecomeDownloadTask: (@Sendable (SessionTask, SessionTask) -> Void)?
    var dataTaskDidReceiveData: (@Sendable (SessionTask, Data) -> Void)?
    var downloadTaskDidFinishDownloading: (@Sendable (SessionTask, String) -> String?)?
    var downloadTaskDidWriteData: (@Sendable (SessionTask, Int64, Int64, Int64) -> Void)?
    var downloadTaskDidResume: (@Sendable (SessionTask, Int64, Int64) -> Void)?
    var dataTaskWillCacheResponse: (@Sendable (SessionTask, CachedResponse) -> CachedResponse?)?
    var taskDidReceiveAuthenticationChallenge:
        (@Sendable (SessionTask, AuthenticationChallenge) -> AuthenticationChallengeDisposition)?
}

/// The hooks as a transfer reads them: one reference to an immutable copy, so that reading them (several times per
/// task) retains one object instead of copying eleven closures.
@dynamicMemberLookup
final class SessionHooksSnapshot: Sendable {
    let value: SessionHooks

    init(_ value: SessionHooks) {
        self.value = value
    }

    subscript<T>(dynamicMember keyPath: KeyPath<SessionHooks, T>) -> T {
        value[keyPath: keyPath]
    }
}
