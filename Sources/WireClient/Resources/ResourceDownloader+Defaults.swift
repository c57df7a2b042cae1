public import Dispatch
public import FoundationEssentials

/// Generic types cannot have stored statics, so the shared downloader lives here (made on first use, thread-safely).
private let sharedDataDownloader = ResourceDownloader<Data>()

extension ResourceDownloader where Value == Data {
    /// The process-wide downloader of bytes (AFImageDownloader's `defaultInstance`).
    public static var shared: ResourceDownloader<Data> { sharedDataDownloader }

    /// A downloader of bytes: `HTTPResponseSerializer` (any 2xx, any content type) and an `AutoPurgingCache<Data>`
    /// of 100 MiB by default.
    /// - Parameters:
    ///   - sessionManager: Runs the downloads, used as it is; nil makes one (see `defaultSessionConfiguration`).
    ///   - prioritization: The order queued downloads start in.
    ///   - maximumActiveDownloads: The most downloads running at once.
    ///   - cache: Where values are kept and looked up; nil for none.
    ///   - callbackQueue: Where handlers run; nil makes a private serial queue.
    public convenience init(
        sessionManager: HTTPSessionManager? = nil, prioritization: DownloadPrioritization = .fifo,
        maximumActiveDownloads: Int = 4, cache: AutoPurgingCache<Data>? = AutoPurgingCache<Data>(),
        callbackQueue: DispatchQueue? = nil
    ) {
        self.init(
            sessionManager: sessionManager, responseSerializer: HTTPResponseSerializer(),
            prioritization: prioritization, maximumActiveDownloads: maximumActiveDownloads, cache: cache,
            callbackQueue: callbackQueue, acceptHeader: "*/*")
    }
}

extension ResourceDownloader where Value == ImageData {
    /// A downloader of images: `ImageResponseSerializer` (format and pixel size read from the header), an
    /// `AutoPurgingCache<ImageData>` costing `pixelWidth × pixelHeight × 4`, and `Accept: image/*` for slots.
    /// - Parameters:
    ///   - sessionManager: Runs the downloads, used as it is (its serializer must produce `ImageData`); nil makes one.
    ///   - prioritization: The order queued downloads start in.
    ///   - maximumActiveDownloads: The most downloads running at once.
    ///   - cache: Where images are kept and looked up; nil for none.
    ///   - callbackQueue: Where handlers run; nil makes a private serial queue.
    public static func images(
        sessionManager: HTTPSessionManager? = nil, prioritization: DownloadPrioritization = .fifo,
        maximumActiveDownloads: Int = 4,
        cache: AutoPurgingCache<ImageData>? = AutoPurgingCache<ImageData>(),
        callbackQueue: DispatchQueue? = nil
    ) -> ResourceDownloader<ImageData> {
        ResourceDownloader(
            sessionManager: sessionManager, responseSerializer: ImageResponseSerializer(),
            prioritization: prioritization, maximumActiveDownloads: maximumActiveDownloads, cache: cache,
            callbackQueue: callbackQueue, acceptHeader: "image/*")
    }
}
