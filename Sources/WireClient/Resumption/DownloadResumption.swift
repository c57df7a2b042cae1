import FoundationEssentials

/// A download task's part in resumable downloads, kept in the task's core.
struct DownloadResumption: Sendable {
    /// Where the response body goes.
    enum Placement: Sendable, Equatable {
        /// A new temporary file (every download that does not resume).
        case newFile
        /// After the `offset` bytes already in the file at `path` (a 206 that continues them).
        case append(path: String, offset: Int64)
        /// The file at `path`, emptied first (the server sent the whole representation).
        case truncate(path: String)
    }

    /// The record this task resumes from (`downloadTask(withResumeData:)`).
    var record: ResumeRecord?
    /// Why the resume data cannot be used: the transfer fails with it before any byte is sent.
    var failure: ClientError?
    /// Where the body goes, decided when the response head arrived.
    var placement = Placement.newFile
    /// The ranged request was answered in a way that cannot continue the file (416, another range): it was sent
    /// again without `Range`, and whatever answers now is taken whole.
    var restarted = false
    /// Waiting for resume data (`cancel(producingResumeData:)`); called once, when the task completes.
    var handler: (@Sendable (Data?) -> Void)?
}
