public import FoundationEssentials
import Synchronization
@_spi(Locking) import Wire

/// What one owner shows (UIImageView+AFNetworking, for any value): at most one active download, replaced by each new
/// load, with a placeholder meanwhile.
///
/// ```swift
/// let slot = ResourceSlot(downloader: ResourceDownloader<ImageData>.images())
/// slot.onValueChange = { image in redraw(image) }
/// slot.load(url: avatarURL, placeholder: defaultAvatar)
/// ```
///
/// A load of the URL already loading does nothing; any other load cancels the previous one, whose callbacks are then
/// never delivered. A cache hit is answered before `load` returns. When the slot is freed, its download is cancelled
/// (and stops if no one else wants it).
public final class ResourceSlot<Value: Sendable>: Sendable {
    /// Called with the request, the response (nil for a cache hit) and the value; the value is then not set.
    public typealias Success = @Sendable (ClientRequest, ClientResponse?, Value) -> Void
    /// Called with the request, the response if one arrived, and the error; the value (the placeholder) stays.
    public typealias Failure = @Sendable (ClientRequest, ClientResponse?, ClientError) -> Void

    private struct Active {
        let id: UUID
        let url: URL
        var receipt: DownloadReceipt?
    }

    private struct State {
        var value: Value?
        var active: Active?
        var onValueChange: (@Sendable (Value?) -> Void)?
    }

    /// Downloads for this slot and holds the cache it looks in. A slot made with `init(downloader:)` keeps its
    /// downloader; one made by `ResourceDownloader.slot(for:)` is kept by that downloader's registry and refers back to
    /// it weakly, so that neither keeps the other alive: nil once the downloader is freed (a load then fails with
    /// `.cancelled`).
    public var downloader: ResourceDownloader<Value>? { keptDownloader ?? registeringDownloader }
    private let keptDownloader: ResourceDownloader<Value>?
    private weak let registeringDownloader: ResourceDownloader<Value>?
    private let state = Lock(State())

    /// Creates an empty slot loading through `downloader`, which it keeps.
    public init(downloader: ResourceDownloader<Value>) {
        keptDownloader = downloader
        registeringDownloader = nil
    }

    /// A slot of `downloader`'s registry (`ResourceDownloader.slot(for:)`), which refers to it weakly.
    init(registeredWith downloader: ResourceDownloader<Value>) {
        keptDownloader = nil
        registeringDownloader = downloader
    }

    deinit {
        if let receipt = state.withLock({ $0.active?.receipt }) { downloader?.cancel(receipt) }
    }

    /// What the slot shows: a loaded value, a placeholder, or nil. Setting it calls `onValueChange`.
    public var value: Value? {
        get { state.withLock { $0.value } }
        set { setValue(newValue) }
    }

    /// Called after every change of `value`, outside the slot's lock: on the caller's thread for a placeholder or a
    /// cache hit, on the downloader's callback queue for a download.
    public var onValueChange: (@Sendable (Value?) -> Void)? {
        get { state.withLock { $0.onValueChange } }
        set { state.withLock { $0.onValueChange = newValue } }
    }

    /// The receipt of the download in progress, if any.
    public var activeReceipt: DownloadReceipt? { state.withLock { $0.active?.receipt } }

    /// Loads `url` with `Accept` set to the downloader's `acceptHeader` (`*/*`, or `image/*` for images); the value is
    /// set when it arrives.
    /// - Parameters:
    ///   - url: What to load; nil shows `placeholder` (even nil) and changes nothing else.
    ///   - placeholder: Shown until the value arrives, when not nil.
    public func load(url: URL?, placeholder: Value? = nil) {
        guard let url else {
            // AFNetworking's nil-URL step: the placeholder, a failure, and the active download left alone.
            setValue(placeholder)
            return
        }
        var request = ClientRequest(url: url)
        request.setValue(downloader?.acceptHeader ?? "*/*", forHTTPHeaderField: "Accept")
        load(request, placeholder: placeholder)
    }

    /// Loads `request`'s resource into the slot.
    ///
    /// A URL that cannot be downloaded (a scheme other than `http`, `https` and `http+unix`, or no host) shows
    /// `placeholder`, even nil, and calls `failure` with `.badURL` before this returns.
    ///
    /// The same URL as the active download's: nothing happens. Otherwise the active download is cancelled (its
    /// callbacks never come); a value in the downloader's cache is delivered before this returns (`success`, or set
    /// as `value` without one); else a non-nil `placeholder` is shown and a download starts.
    /// - Parameters:
    ///   - request: What to load (GET).
    ///   - placeholder: Shown until the value arrives, when not nil.
    ///   - success: Gets the value instead of `value` getting it; on the downloader's callback queue, or before
    ///     `load` returns for a cache hit.
    ///   - failure: Told why the load failed; the placeholder stays.
    public func load(_ request: ClientRequest, placeholder: Value? = nil, success: Success? = nil, failure: Failure? = nil) {
        guard ResourceDownloader<Value>.isDownloadable(request.url) else {
            // As for a nil URL: the placeholder (nil included), the failure before `load` returns, and the active
            // download left alone.
            setValue(placeholder)
            failure?(
                request, nil,
                ClientError(
                    .badURL, failingURL: request.url,
                    failureReason: ResourceDownloader<Value>.undownloadableReason(request.url)))
            return
        }
        guard let downloader else {
            // A registry's slot outliving its downloader: nothing can load any more.
            setValue(placeholder)
            failure?(
                request, nil,
                ClientError(
                    .cancelled, failingURL: request.url,
                    failureReason: "The ResourceDownloader of this slot was released: \(request.url.absoluteString)"))
            return
        }
        let id = ReceiptIdentifiers.next()
        // Supersede the active load in one step, so that of two concurrent loads each cancels what it replaced.
        let superseded = state.withLock { state -> (isSameURL: Bool, receipt: DownloadReceipt?) in
            if state.active?.url == request.url { return (true, nil) }
            defer { state.active = Active(id: id, url: request.url, receipt: nil) }
            return (false, state.active?.receipt)
        }
        if superseded.isSameURL { return }
        if let receipt = superseded.receipt { downloader.cancel(receipt) }
        if let cached = downloader.cache?.value(for: request) {
            guard finish(id) else { return }
            if let success { success(request, nil, cached) } else { setValue(cached) }
            return
        }
        if let placeholder { setValue(placeholder) }
        let receipt = downloader.download(
            request, receiptID: id,
            success: { [weak self] request, response, value in
                guard let self, self.finish(id) else { return }
                if let success { success(request, response, value) } else { self.setValue(value) }
            },
            failure: { [weak self] request, response, error in
                guard let self, self.finish(id) else { return }
                failure?(request, response, error)
            })
        let isCurrent = state.withLock { state -> Bool in
            guard state.active?.id == id else { return false }
            state.active?.receipt = receipt
            return true
        }
        // Superseded while starting (a concurrent load or cancel saw no receipt yet): nobody else can cancel it.
        if !isCurrent, let receipt { downloader.cancel(receipt) }
    }

    /// Cancels the active download (its callbacks never come); the value stays.
    public func cancel() {
        let receipt = state.withLock { state -> DownloadReceipt? in
            defer { state.active = nil }
            return state.active?.receipt
        }
        if let receipt { downloader?.cancel(receipt) }
    }

    /// Ends load `id` if it is still the active one; false for a superseded or cancelled load.
    private func finish(_ id: UUID) -> Bool {
        state.withLock { state in
            guard state.active?.id == id else { return false }
            state.active = nil
            return true
        }
    }

    private func setValue(_ value: Value?) {
        let observer = state.withLock { state in
            state.value = value
            return state.onValueChange
        }
        observer?(value)
    }
}

/// The slots `ResourceDownloader.slot(for:)` keeps per owner, each dropped (and its download cancelled) once its owner
/// is gone: checked at every `slot(for:)` call.
final class SlotRegistry<Value: Sendable>: Sendable {
    private struct Entry {
        weak var owner: (any AnyObject & Sendable)?
        let slot: ResourceSlot<Value>
    }

    private let entries = Lock<[ObjectIdentifier: Entry]>([:])

    func slot(for owner: any AnyObject & Sendable, make: () -> ResourceSlot<Value>) -> ResourceSlot<Value> {
        let (slot, dropped) = entries.withLock { entries -> (ResourceSlot<Value>, [ResourceSlot<Value>]) in
            var dropped: [ResourceSlot<Value>] = []
            for (key, entry) in entries where entry.owner == nil {
                dropped.append(entry.slot)
                entries[key] = nil
            }
            let key = ObjectIdentifier(owner)
            if let entry = entries[key], entry.owner === owner { return (entry.slot, dropped) }
            // Making a slot runs no user code, so it may happen under the lock.
            let fresh = make()
            entries[key] = Entry(owner: owner, slot: fresh)
            return (fresh, dropped)
        }
        // The dropped slots are freed here, outside the lock: their deinit cancels through the downloader.
        _ = dropped
        return slot
    }
}

extension ResourceDownloader {
    /// The slot of `owner`, made on first use and kept while `owner` lives (the Linux counterpart of a view's
    /// associated receipt). Slots of owners freed since are dropped now, which cancels their downloads. The owner is
    /// `Sendable` because the registry's weak reference to it is read from whichever thread asks next.
    public func slot(for owner: any AnyObject & Sendable) -> ResourceSlot<Value> {
        // The registry keeps the slot; the slot refers back weakly, or the downloader would keep itself.
        slots.slot(for: owner) { ResourceSlot(registeredWith: self) }
    }
}
