import FoundationEssentials
import Wire

/// The task's side of a resumable download: the resumption it carries. The session implements it.
protocol DownloadResuming: TransferContext {
    /// The resumption now.
    var resumption: DownloadResumption { get }
    /// Changes the resumption.
    func updateResumption(_ change: (inout DownloadResumption) -> Void)
}

/// Resumable downloads, as a stage of the transfer chain: a download task made from resume data sends the recorded
/// request with `Range: bytes=<n>-`, `If-Range: <validator>` and `Accept-Encoding: identity`. A 206 whose
/// `Content-Range` starts at n and runs to the end appends to the kept temporary file and tells
/// `downloadTaskDidResume(task, n, total)`; progress counts on from n, of the full length. A 200 (the validator
/// changed, or the server ignores ranges) empties the file and starts over (offset 0). A 416, or a 206 with any other
/// range, sends the request again without `Range` and takes the answer whole: a different file is never appended to
/// the kept bytes.
///
/// Before anything is sent, resume data that does not decode and a temporary file that is missing or not exactly
/// the recorded size fail the task with `.cannotDecodeRawData`. Every other task passes through.
struct ResumptionStage: TransferStage {
    @inline(__always) nonisolated(nonsending) func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
        guard chain.transfer.isDownload, let host = chain.transfer as? any DownloadResuming else {
            return try await chain.proceed(chain.request)
        }
        if let failure = await Self.check(host) { throw failure }
        let answer = try await chain.proceed(chain.request)
        guard let fresh = await Self.resolve(answer.response, host) else { return answer }
        await answer.body.discard()
        host.setCurrentRequest(fresh)
        let whole = try await chain.proceed(fresh)
        // Restarted: whatever answers is taken whole (this only decides where the body goes).
        _ = await Self.resolve(whole.response, host)
        return whole
    }

    /// Before a resuming task's request goes out: the data decoded, and the temporary file is there with exactly the
    /// recorded bytes. Nil when the task may go on (every task that does not resume).
    nonisolated(nonsending) private static func check(_ host: any DownloadResuming) async -> ClientError? {
        let resumption = host.resumption
        if let failure = resumption.failure { return failure }
        guard let record = resumption.record else { return nil }
        host.updateResumption {
            $0.placement = .newFile; $0.restarted = false
        }
        let url = host.originalRequest.url
        let size: Int
        do {
            size = try await fileSize(record.temporaryFile)
        } catch {
            return ClientError(
                .cannotDecodeRawData, failingURL: url, underlying: error,
                failureReason: "the resume data's temporary file \(record.temporaryFile) cannot be read: \(error)")
        }
        guard Int64(size) == record.bytesOnDisk else {
            return ClientError(
                .cannotDecodeRawData, failingURL: url,
                failureReason:
                    "the resume data's temporary file holds \(size) bytes, not the \(record.bytesOnDisk) it recorded")
        }
        return nil
    }

    /// A resuming task's final response head arrived: decides where the body goes and tells the resume hook, or
    /// returns the request to send instead (the same without `Range`) when the answer cannot continue the file.
    nonisolated(nonsending) private static func resolve(_ response: ClientResponse, _ host: any DownloadResuming) async
        -> ClientRequest?
    {
        let resumption = host.resumption
        guard let record = resumption.record else { return nil }
        host.setResponse(response)
        let path = record.temporaryFile
        let offset = record.bytesOnDisk
        if !resumption.restarted && response.statusCode == 206 {
            let range = response.headers.first(name: "Content-Range").flatMap { ContentRange($0) }
            guard let range, let bytes = range.range, bytes.lowerBound == offset,
                range.completeLength.map({ bytes.upperBound == $0 - 1 }) ?? true
            else {
                host.updateResumption { $0.restarted = true }
                return record.freshRequest
            }
            host.updateResumption { $0.placement = .append(path: path, offset: offset) }
            // `bytes N-<Int64.max>/*` is a valid field: its end + 1 would overflow, so the total is unknown then.
            let total = range.completeLength ?? (bytes.upperBound < .max ? bytes.upperBound + 1 : -1)
            await host.continueDownload(at: offset, of: total)
            return nil
        }
        if !resumption.restarted && response.statusCode == 416 {
            host.updateResumption { $0.restarted = true }
            return record.freshRequest
        }
        // The whole representation (200), or an answer that is not the file (404…): the kept bytes go.
        host.updateResumption { $0.placement = .truncate(path: path) }
        if response.statusCode == 200 {
            await host.continueDownload(at: 0, of: response.expectedContentLength)
        }
        return nil
    }

    /// The size of the file at `path` now.
    static func fileSize(_ path: String) async throws(IOError) -> Int {
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
