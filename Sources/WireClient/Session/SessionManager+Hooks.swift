import Synchronization
public import FoundationEssentials
@_spi(Locking) public import Wire

/// The session hooks: settable at any time, read when each event happens; they run on the delegate queue.
extension SessionManager {
    /// Called once when the session became invalid (`invalidateSession`), after the last task's completion handler; the error is nil for an explicit invalidation.
    public var sessionDidBecomeInvalid: (@Sendable (ClientError?) -> Void)? {
        get { state.withLock { $0.hooks.sessionDidBecomeInvalid } }
        set { state.withLock { $0.hooks.sessionDidBecomeInvalid = newValue } }
    }

    /// Asked before each redirect hop with the 3xx response and the request the redirect rules propose (method, body and credentials already adjusted); returns the request to send, or nil to stop and deliver the 3xx response itself.
    public var taskWillPerformHTTPRedirection: (@Sendable (SessionTask, ClientResponse, ClientRequest) -> ClientRequest?)? {
        get { state.withLock { $0.hooks.taskWillPerformHTTPRedirection } }
        set { state.withLock { $0.hooks.taskWillPerformHTTPRedirection = newValue } }
    }

    /// Asked for the body to send again on a 307/308 redirect; nil replays the task's own body.
    public var taskNeedNewBodyStream: (@Sendable (SessionTask) -> RequestBody?)? {
        get { state.withLock { $0.hooks.taskNeedNewBodyStream } }
        set { state.withLock { $0.hooks.taskNeedNewBodyStream = newValue } }
    }

    /// After body bytes went to the socket: `(task, bytesSent, totalBytesSent, totalBytesExpectedToSend)`, the total falling back to the request's `Content-Length` (−1 unknown).
    public var taskDidSendBodyData: (@Sendable (SessionTask, Int64, Int64, Int64) -> Void)? {
        get { state.withLock { $0.hooks.taskDidSendBodyData } }
        set { state.withLock { $0.hooks.taskDidSendBodyData = newValue } }
    }

    /// When a task's transfer ended, before its response is serialized and its completion handler runs; with the transport error, if any.
    public var taskDidComplete: (@Sendable (SessionTask, ClientError?) -> Void)? {
        get { state.withLock { $0.hooks.taskDidComplete } }
        set { state.withLock { $0.hooks.taskDidComplete = newValue } }
    }

    /// With the last exchange's metrics, just before `taskDidComplete`.
    public var taskDidFinishCollectingMetrics: (@Sendable (SessionTask, HTTPClientMetrics.Snapshot) -> Void)? {
        get { state.withLock { $0.hooks.taskDidFinishCollectingMetrics } }
        set { state.withLock { $0.hooks.taskDidFinishCollectingMetrics = newValue } }
    }

    /// When a data or upload task's final response head arrived: `.allow` (the default without a hook) or `.cancel`.
    public var dataTaskDidReceiveResponse: (@Sendable (SessionTask, ClientResponse) -> ResponseDisposition)? {
        get { state.withLock { $0.hooks.dataTaskDidReceiveResponse } }
        set { state.withLock { $0.hooks.dataTaskDidReceiveResponse = newValue } }
    }

    /// When a data task became a download task (`ResponseDisposition.becomeDownload`): `(dataTask, downloadTask)`.
    public var dataTaskDidBecomeDownloadTask: (@Sendable (SessionTask, SessionTask) -> Void)? {
        get { state.withLock { $0.hooks.dataTaskDidBecomeDownloadTask } }
        set { state.withLock { $0.hooks.dataTaskDidBecomeDownloadTask = newValue } }
    }

    /// With each piece of a data or upload task's body, in order, never while the task is suspended.
    public var dataTaskDidReceiveData: (@Sendable (SessionTask, Data) -> Void)? {
        get { state.withLock { $0.hooks.dataTaskDidReceiveData } }
        set { state.withLock { $0.hooks.dataTaskDidReceiveData = newValue } }
    }

    /// Asked where a finished download's temporary file goes; a path here takes precedence over the task's `destination`, nil defers to it.
    public var downloadTaskDidFinishDownloading: (@Sendable (SessionTask, String) -> String?)? {
        get { state.withLock { $0.hooks.downloadTaskDidFinishDownloading } }
        set { state.withLock { $0.hooks.downloadTaskDidFinishDownloading = newValue } }
    }

    /// After a download wrote body bytes to its file: `(task, bytesWritten, totalBytesWritten, totalBytesExpectedToWrite)` (−1 unknown).
    public var downloadTaskDidWriteData: (@Sendable (SessionTask, Int64, Int64, Int64) -> Void)? {
        get { state.withLock { $0.hooks.downloadTaskDidWriteData } }
        set { state.withLock { $0.hooks.downloadTaskDidWriteData = newValue } }
    }

    /// When a download made from resume data got its response head: `(task, fileOffset, expectedTotalBytes)`, the
    /// offset being the bytes kept on disk (0 when the server sent the whole representation again) and the total the
    /// representation's full length (−1 unknown). Before the first `downloadTaskDidWriteData`.
    public var downloadTaskDidResume: (@Sendable (SessionTask, Int64, Int64) -> Void)? {
        get { state.withLock { $0.hooks.downloadTaskDidResume } }
        set { state.withLock { $0.hooks.downloadTaskDidResume = newValue } }
    }

    /// Answers a 401 (`WWW-Authenticate`) or 407 (`Proxy-Authenticate`) challenge: Basic credentials or an
    /// `Authorization` value to replay the request with, the configuration's `credentialStorage`, cancel, or deliver the
    /// response. Without it, the 401 is delivered. A proxy's 407, forwarded or answering `CONNECT`, comes with the
    /// proxy's protection space (`isProxy`) and its answer goes to the proxy only; without the hook the credential
    /// storage is asked for that space. On the delegate queue.
    public var taskDidReceiveAuthenticationChallenge:
        (@Sendable (SessionTask, AuthenticationChallenge) -> AuthenticationChallengeDisposition)?
    {
        get { state.withLock { $0.hooks.taskDidReceiveAuthenticationChallenge } }
        set { state.withLock { $0.hooks.taskDidReceiveAuthenticationChallenge = newValue } }
    }

    /// Asked before a data task's complete response is stored in the session's `urlCache`, with the entry the session
    /// proposes; returns the entry to store (that one, or another) or nil to store nothing. On the delegate queue.
    public var dataTaskWillCacheResponse: (@Sendable (SessionTask, CachedResponse) -> CachedResponse?)? {
        get { state.withLock { $0.hooks.dataTaskWillCacheResponse } }
        set { state.withLock { $0.hooks.dataTaskWillCacheResponse = newValue } }
    }
}
