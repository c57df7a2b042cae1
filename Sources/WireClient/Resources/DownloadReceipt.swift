public import FoundationEssentials

/// One requester's claim on a download (AFImageDownloadReceipt): cancel it with `ResourceDownloader.cancel(_:)` to
/// fail that requester alone; the download itself stops only when no requester is left.
public struct DownloadReceipt: Sendable, Equatable, CustomStringConvertible {
    /// This requester's identifier (given to `download`, or made for it).
    public let receiptID: UUID
    /// The download's task, shared by every requester of the same URL.
    public let task: SessionTask

    /// Creates a receipt.
    public init(receiptID: UUID, task: SessionTask) {
        self.receiptID = receiptID
        self.task = task
    }

    /// Same requester of the same task.
    public static func == (lhs: DownloadReceipt, rhs: DownloadReceipt) -> Bool {
        lhs.receiptID == rhs.receiptID && lhs.task === rhs.task
    }

    /// `receipt <uuid> for <task>`.
    public var description: String { "receipt \(receiptID) for \(task)" }
}
