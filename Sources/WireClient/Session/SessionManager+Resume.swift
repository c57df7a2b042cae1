public import FoundationEssentials
import Wire

/// Resumable downloads (§13.2.9): the factory that continues from resume data, and the transfer's steps for it.
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
    public func downloadTask(withResumeData resumeData: Data, progress: TaskProgressHandler? = nil,
                             destination: DownloadDestination? = nil, replacesExistingFile: Bool = false,
                             completionHandler: TaskCompletionHandler?) -> SessionTask {
        let record: ResumeRecord
        do {
            record = try ResumeRecord.decode(resumeData)
        } catch {
            // No URL to name: the task fails on resume, before any connection.
            let task = makeTask(.download, ClientRequest(url: URL(string: "about:resume-data")!), downloadProgress: progress,
                                completion: completionHandler, destination: destination,
                                replacesExistingFile: replacesExistingFile)
            task.updateResumption { $0.failure = error }
            return task
        }
        let task = makeTask(.download, record.resumingRequest, downloadProgress: progress, completion: completionHandler,
                            destination: destination, replacesExistingFile: replacesExistingFile)
        task.updateResumption { $0.record = record }
        return task
    }

    /// Before a resuming task's request goes out: the data decoded, and the temporary file is there with exactly the
    /// recorded bytes. Nil when the task may go on (every task that does not resume).
    @inline(never)  // Its own async frame, allocated only when called (`transfer`).
    func checkResumption(of task: SessionTask) async -> ClientError? {
        let resumption = task.resumption
        if let failure = resumption.failure { return failure }
        guard let record = resumption.record else { return nil }
        task.updateResumption { $0.placement = .newFile; $0.restarted = false }
        let size: Int
        do {
            size = try await Self.size(of: record.temporaryFile)
        } catch {
            return ClientError(.cannotDecodeRawData, failingURL: task.originalRequest.url, underlying: error,
                               failureReason: "the resume data's temporary file \(record.temporaryFile) cannot be read: \(error)")
        }
        guard Int64(size) == record.bytesOnDisk else {
            return ClientError(.cannotDecodeRawData, failingURL: task.originalRequest.url, failureReason:
                "the resume data's temporary file holds \(size) bytes, not the \(record.bytesOnDisk) it recorded")
        }
        return nil
    }

    /// A resuming task's final response head arrived: decides where the body goes and tells the resume hook, or
    /// returns the request to send instead (the same without `Range`) when the answer cannot continue the file.
    @inline(never)  // Its own async frame, allocated only when called (`transfer`).
    func resolveResumption(of task: SessionTask, _ delegate: TaskDelegate, response: ClientResponse,
                           idle: IdleTimer) async -> ClientRequest? {
        let resumption = task.resumption
        guard let record = resumption.record else { return nil }
        let path = record.temporaryFile
        let offset = record.bytesOnDisk
        if !resumption.restarted && response.statusCode == 206 {
            let range = response.headers.first(name: "Content-Range").flatMap { ContentRange($0) }
            guard let range, let bytes = range.range, bytes.lowerBound == offset,
                  range.completeLength.map({ bytes.upperBound == $0 - 1 }) ?? true else {
                task.updateResumption { $0.restarted = true }
                return record.freshRequest
            }
            task.updateResumption { $0.placement = .append(path: path, offset: offset) }
            // `bytes N-<Int64.max>/*` is a valid field: its end + 1 would overflow, so the total is unknown then.
            let total = range.completeLength ?? (bytes.upperBound < .max ? bytes.upperBound + 1 : -1)
            await tellResumed(task, delegate, offset: offset, total: total, idle: idle)
            return nil
        }
        if !resumption.restarted && response.statusCode == 416 {
            task.updateResumption { $0.restarted = true }
            return record.freshRequest
        }
        // The whole representation (200), or an answer that is not the file (404…): the kept bytes go.
        task.updateResumption { $0.placement = .truncate(path: path) }
        if response.statusCode == 200 {
            await tellResumed(task, delegate, offset: 0, total: response.expectedContentLength, idle: idle)
        }
        return nil
    }

    /// Sets progress to continue from `offset` and calls `downloadTaskDidResume` (and, past 0, the progress handler).
    private func tellResumed(_ task: SessionTask, _ delegate: TaskDelegate, offset: Int64, total: Int64,
                             idle: IdleTimer) async {
        let progress = task.continueProgress(at: offset, of: total)
        let hook = hooks.downloadTaskDidResume
        let report = offset > 0 ? delegate.downloadProgress : nil
        guard hook != nil || report != nil else { return }
        await askCaller(idle) {
            hook?(task, offset, total)
            report?(progress)
        }
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
            throw ClientError(.cannotWriteToFile, failingURL: url, underlying: error,
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
              let response = outcome.response, response.statusCode == 200 || response.statusCode == 206 else { return nil }
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
        guard let size = try? await Self.size(of: path) else { return nil }
        let resumed = ResumeRecord(version: ResumeRecord.currentVersion, url: response.url.absoluteString,
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

    /// The size of the file at `path` now.
    private static func size(of path: String) async throws(IOError) -> Int {
        let file = try await AsyncFile.open(path, mode: .read)
        let size: Int
        do {
            size = try await file.size()
        } catch {
            try? await file.close()
            throw error
        }
        try? await file.close()
        return size
    }
}
