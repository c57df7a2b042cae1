import FoundationEssentials

/// The order in which queued downloads start.
public enum DownloadPrioritization: Sendable, Hashable {
    /// Oldest request first.
    case fifo
    /// Newest request first (what a scrolling list wants: the rows on screen now).
    case lifo
}

/// The downloader's bookkeeping as a value: merged downloads by URL, the queue of those not yet started, and the
/// started ones not yet completed. Events in, the tasks to start or cancel and the requesters to call out; no I/O, no
/// lock and no user code inside (the shell, `ResourceDownloader`, acts on what it returns after unlocking).
struct DownloadQueue<Requester> {
    /// One download shared by every requester of its URL.
    struct Entry {
        /// Tells this download from a later one of the same URL (a late completion must not reach the later one).
        let id: UUID
        let task: SessionTask
        /// Requesters in registration order, each with its receipt identifier.
        var requesters: [(receiptID: UUID, requester: Requester)]
    }

    /// What cancelling a receipt does.
    struct Cancellation {
        /// The removed requester, to be failed with `.cancelled`.
        let requester: Requester
        /// The download to cancel because no requester is left; nil while others remain.
        let taskToCancel: SessionTask?
    }

    let prioritization: DownloadPrioritization
    let maximumActiveDownloads: Int
    private var entries: [String: Entry] = [:]
    /// Keys of downloads waiting for a slot, in start order (the next to start is first).
    private var queued: [String] = []
    /// Downloads started and not yet completed (cancelled ones included until their task completes).
    private var active: Set<UUID> = []

    init(prioritization: DownloadPrioritization, maximumActiveDownloads: Int) {
        precondition(maximumActiveDownloads > 0, "ResourceDownloader: maximumActiveDownloads must be at least 1")
        self.prioritization = prioritization
        self.maximumActiveDownloads = maximumActiveDownloads
    }

    /// Started downloads whose tasks have not completed.
    var activeCount: Int { active.count }
    /// Downloads waiting for a slot.
    var queuedCount: Int { queued.count }

    /// Adds a requester to the download of `key` if there is one (no slot is taken); returns its task, or nil.
    mutating func join(_ key: String, receiptID: UUID, requester: Requester) -> SessionTask? {
        guard entries[key] != nil else { return nil }
        entries[key]!.requesters.append((receiptID, requester))
        return entries[key]!.task
    }

    /// Registers a new download with its first requester.
    /// - Returns: Whether to start it now; otherwise it waits in the queue.
    mutating func add(_ key: String, id: UUID, task: SessionTask, receiptID: UUID, requester: Requester) -> Bool {
        entries[key] = Entry(id: id, task: task, requesters: [(receiptID, requester)])
        if active.count < maximumActiveDownloads {
            active.insert(id)
            return true
        }
        switch prioritization {
        case .fifo: queued.append(key)
        case .lifo: queued.insert(key, at: 0)
        }
        return false
    }

    /// Removes the requester `receiptID` of the download of `key` running `taskIdentifier`.
    /// - Returns: What to do, or nil when the receipt is unknown or its download already finished.
    mutating func cancel(_ key: String, taskIdentifier: Int, receiptID: UUID) -> Cancellation? {
        guard var entry = entries[key], entry.task.taskIdentifier == taskIdentifier,
            let index = entry.requesters.firstIndex(where: { $0.receiptID == receiptID })
        else { return nil }
        let requester = entry.requesters.remove(at: index).requester
        guard entry.requesters.isEmpty else {
            entries[key] = entry
            return Cancellation(requester: requester, taskToCancel: nil)
        }
        // The last requester left: the download goes, queued (it never reaches the network) or running (its slot is
        // freed when its task reports the cancellation).
        entries[key] = nil
        queued.removeAll { $0 == key }
        return Cancellation(requester: requester, taskToCancel: entry.task)
    }

    /// The task of download `id` (of `key`) completed.
    /// - Returns: The requesters to answer, in registration order (nil when the download was cancelled or replaced
    ///   by a newer one of the same URL: that completion is stale), and the queued tasks to start in its slot.
    mutating func complete(_ key: String, id: UUID) -> (requesters: [Requester]?, start: [SessionTask]) {
        var requesters: [Requester]?
        if let entry = entries[key], entry.id == id {
            entries[key] = nil
            requesters = entry.requesters.map(\.requester)
            // A queued task can complete without starting (its session was invalidated): it leaves the queue too.
            if !active.contains(id) { queued.removeAll { $0 == key } }
        }
        guard active.remove(id) != nil else { return (requesters, []) }
        var start: [SessionTask] = []
        while active.count < maximumActiveDownloads, !queued.isEmpty {
            let next = queued.removeFirst()
            guard let entry = entries[next] else { continue }
            active.insert(entry.id)
            start.append(entry.task)
        }
        return (requesters, start)
    }

    /// Takes every download, queued or running, out of the queue: the downloader is going away.
    /// - Returns: Each download's task and requesters, to cancel and to fail with `.cancelled`.
    mutating func removeAll() -> [Entry] {
        defer {
            entries = [:]
            queued = []
            active = []
        }
        return Array(entries.values)
    }
}
