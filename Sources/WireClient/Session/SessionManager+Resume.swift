public import FoundationEssentials
import Wire

/// Resumable downloads: the factory that continues from resume data, where the body goes, and the resume data a
/// cancelled download hands over (the transfer's part is `ResumptionStage`).
extension SessionManager {
    /// A download task that continues the partial download `resumeData` describes; it starts suspended.
    ///
    /// It sends the recorded request with `Range: bytes=<n>-`, `If-Range: <validator>` and `Accept-Encoding:
    /// identity`. A 206 whose `Content-Range` starts at n and runs to the end appends to the kept temporary file and
    /// tells `downloadTaskDidResume(task, n, total)`; progress counts on from n, of the full length. A 200 (the
    /// validator changed, or the server ignores ranges) empties the file and starts over (offset 0). A 416, or a 206
    /// with any other range, sends the request again without `Range` and takes the answer whole: a different file is
    /// never appended to the kept bytes.
    ///
    /// Data that does not decode (corrupt, another version, a file outside WireClient's download directory) and a
    /// temporary file that is missing or not exactly the recorded size fail the task with `.cannotDecodeRawData`
    /// (−1015) when it is resumed, before anything is sent. (Starting over is not attempted: the data no longer
    /// describes a usable partial download, and a caller who wants the file anyway has its URL.)
    /// - Parameters:
    ///   - resumeData: What `cancel(producingResumeData:)` produced.
    ///   - progress: Called after every change of download progress.
    ///   - destination: Where the file goes (`downloadTaskDidFinishDownloading` takes precedence).
    ///   - replacesExistingFile: Whether an existing file at the destination is replaced.
    ///   - completionHandler: Called once, on the completion queue.
    public func downloadTask(
        withResumeData resumeData: Data, progress: TaskProgressHandler? = nil,
        destination: DownloadDestination? = nil, replacesExistingFile: Bool = false,
        completionHandler: TaskCompletionHandler?
    ) -> SessionTask {
        let record: ResumeRecord
        do {
            record = try ResumeRecord.decode(resumeData)
        } catch {
            // No URL to name: the task fails on resume, before any connection.
            let task = makeTask(
                .download, ClientRequest(url: URL(string: "about:resume-data")!), downloadProgress: progress,
                completion: completionHandler, destination: destination,
                replacesExistingFile: replacesExistingFile)
            task.updateResumption { $0.failure = error }
            return task
        }
        let task = makeTask(
            .download, record.resumingRequest, downloadProgress: progress, completion: completionHandler,
            destination: destination, replacesExistingFile: replacesExistingFile)
        task.updateResumption { $0.record = record }
        return task
    }

    /// Opens where a download task's body goes: a new temporary file, or the kept one to append to or empty.
    /// - Throws: `.cannotWriteToFile` with the `IOError`.
    func openDownloadFile(for task: SessionTask, url: URL) async throws(ClientError) -> AsyncFile {
        let mode: AsyncFile.Mode
        let path: String
        switch task.resumption.placement {
        case .newFile:
            return try await DownloadFile.create(url: url)
        case .append(let kept, _):
            (mode, path) = (.append, kept)
        case .truncate(let kept):
            (mode, path) = (.truncate, kept)
        }
        do {
            return try await AsyncFile.open(path, mode: mode, permissions: 0o600)
        } catch {
            throw ClientError(
                .cannotWriteToFile, failingURL: url, underlying: error,
                failureReason: "cannot open the download's kept temporary file \(path): \(error)")
        }
    }

    /// When a task completes: hands resume data to a waiting `cancel(producingResumeData:)` (on the delegate queue).
    /// - Returns: Whether the temporary file is kept for the resumption (and so must not be deleted).
    func handOverResumeData(of task: SessionTask, _ outcome: TransferOutcome) async -> Bool {
        guard let handler = task.takeResumeDataHandler() else { return false }
        let data = await resumeData(of: task, outcome)
        await askDelegateQueue { handler(data) }
        return data != nil
    }

    /// The resume data for a download that stopped with an error, or nil when it cannot be resumed.
    private func resumeData(of task: SessionTask, _ outcome: TransferOutcome) async -> Data? {
        guard task.kind == .download, outcome.error != nil, let path = outcome.temporaryFile,
            let response = outcome.response, response.statusCode == 200 || response.statusCode == 206
        else { return nil }
        let request = task.currentRequest
        let record = task.resumption.record
        guard request.method.uppercased() == "GET", record != nil || !request.headers.contains(name: "Range") else { return nil }
        let encoding = response.headers.first(name: "Content-Encoding").map { Self.trimmed($0).lowercased() }
        guard encoding == nil || encoding == "" || encoding == "identity" else { return nil }
        guard let validator = Self.validator(of: response) else { return nil }
        let total: Int64
        if response.statusCode == 206 {
            total = response.headers.first(name: "Content-Range").flatMap { ContentRange($0) }?.completeLength ?? -1
        } else {
            total = response.expectedContentLength
        }
        guard let size = try? await ResumptionStage.fileSize(path) else { return nil }
        let resumed = ResumeRecord(
            version: ResumeRecord.currentVersion, url: response.url.absoluteString,
            headers: record?.headers ?? ResumeRecord.recordedHeaders(of: request),
            validator: validator, bytesOnDisk: Int64(size), expectedTotalBytes: total,
            temporaryFile: path)
        return resumed.encoded()
    }

    /// The validator `If-Range` may carry (RFC 9110 §13.1.5): a strong `ETag`, else `Last-Modified`.
    static func validator(of response: ClientResponse) -> String? {
        if let etag = response.headers.first(name: "ETag").map(Self.trimmed), etag.hasPrefix("\"") {
            return etag
        }
        if let date = response.headers.first(name: "Last-Modified").map(Self.trimmed), !date.isEmpty {
            return date
        }
        return nil
    }

    /// `text` without spaces and tabs around it.
    private static func trimmed(_ text: String) -> String {
        String(text[...].trimmingSpacesAndTabs())
    }
}
