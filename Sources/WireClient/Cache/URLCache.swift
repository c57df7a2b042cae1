public import FoundationEssentials
import Synchronization
@_spi(Locking) import Wire

/// An RFC 9111 response cache in memory and, optionally, on disk (NSURLCache); what a
/// `SessionConfiguration.urlCache` consults.
///
/// ```swift
/// let cache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 64 << 20, directory: "/var/cache/app/http")
/// var configuration = SessionConfiguration.default
/// configuration.urlCache = cache
/// ```
///
/// Both tiers evict least recently used entries beyond their capacity, reads counting as use. The disk tier keeps one
/// file per URL, written whole to a temporary file and renamed (a killed process leaves an entry whole or absent);
/// a file that is torn, foreign or damaged reads as a miss and is removed. Its index is rebuilt from the directory
/// when the cache is made, ordered by each file's modification time, which every hit updates. A directory that cannot
/// be created leaves a memory-only cache. Every method may be called from any thread; none calls user code.
///
/// ## The name it shares with FoundationNetworking
///
/// FoundationNetworking on Linux has a `URLCache` class too (Foundation's `NSURLCache`, which `URLSession` uses). This
/// type keeps the name anyway, because it is NSURLSessionConfiguration's name for it and the one an AFNetworking
/// user looks for; it is the only public type of Wire, WireTLS and WireClient whose name Foundation also declares. A
/// file that imports WireClient without FoundationNetworking (FoundationEssentials has no `URLCache`) writes
/// `URLCache`. A file that imports both must say which it means, or the compiler reports the name as ambiguous:
///
/// ```swift
/// import FoundationNetworking
/// import WireClient
///
/// configuration.urlCache = WireClient.URLCache(memoryCapacity: 4 << 20, diskCapacity: 0, directory: nil)
/// ```
///
/// `SessionConfiguration.urlCache` accepts only this type, so Foundation's cache can never be set there by mistake.
public final class URLCache: Sendable {
    /// The most bytes (bodies and headers) the memory tier holds.
    public let memoryCapacity: Int
    /// The most bytes of entry files the disk tier holds; 0 for none.
    public let diskCapacity: Int
    /// The directory of the disk tier; nil for a memory-only cache.
    public let directory: String?

    private struct State {
        /// Entries by URL key.
        var memory = LRUStore<CachedResponse>()
        /// Entry file sizes by file name, in access order.
        var disk = LRUStore<Int>()
    }

    private let state: Lock<State>
    private let files: CacheDirectory?

    /// Creates a cache; with a directory and a disk capacity, opens (creating when missing) the disk tier there and
    /// indexes the entries it already holds, evicting beyond `diskCapacity`.
    /// - Parameters:
    ///   - memoryCapacity: The most bytes kept in memory.
    ///   - diskCapacity: The most bytes kept on disk.
    ///   - directory: Where entry files live; nil for memory only.
    public init(memoryCapacity: Int, diskCapacity: Int, directory: String?) {
        self.memoryCapacity = max(0, memoryCapacity)
        self.diskCapacity = max(0, diskCapacity)
        self.directory = directory
        let files = directory.flatMap { diskCapacity > 0 ? CacheDirectory(path: $0, largestEntry: diskCapacity) : nil }
        self.files = files
        var initial = State()
        var evicted: [String] = []
        if let files {
            for found in files.scan() { initial.disk.insert(found.size, cost: UInt64(max(0, found.size)), forKey: found.name) }
            evicted = Self.evict(&initial.disk, to: diskCapacity)
        }
        state = Lock(initial)
        if let files {
            for name in evicted { files.removeBlocking(name) }
        }
    }

    /// A private cache of 4 MiB in memory that never touches the disk (`SessionConfiguration.ephemeral`).
    public static func ephemeral() -> URLCache {
        URLCache(memoryCapacity: 4 << 20, diskCapacity: 0, directory: nil)
    }

    /// The bytes the memory tier holds now.
    public var currentMemoryUsage: Int { state.withLock { Int($0.memory.totalCost) } }

    /// The bytes of entry files the disk tier holds now.
    public var currentDiskUsage: Int { state.withLock { Int($0.disk.totalCost) } }

    /// The entry stored for `request`'s URL if it matches the request's `Vary`'d fields, from memory, else from disk
    /// (which brings it into memory); nil on a miss. The file is read on Wire's file threads. A disk file that does not
    /// decode is removed.
    public func cachedResponse(for request: ClientRequest) async -> CachedResponse? {
        let key = Self.key(request.url)
        let name: String
        switch lookUp(key) {
        case .memory(let entry): return CacheRules.matches(entry, request) ? entry : nil
        case .miss: return nil
        case .disk(let found, _): name = found
        }
        guard let files else { return nil }
        guard let bytes = await files.read(name), let entry = CacheEntryCodec.decode(bytes, url: key) else {
            await removeFile(name)
            return nil
        }
        files.touch(name)
        keepInMemory(entry, key: key)
        return CacheRules.matches(entry, request) ? entry : nil
    }

    /// The entry stored for `request`'s URL, as `cachedResponse(for:)` finds it, but without suspending: from memory,
    /// else from its file read on the calling thread with blocking calls (open, fstat, read, close: a few microseconds
    /// for a small file in the page cache) when the file is at most `limit` bytes. For a caller that must answer
    /// synchronously, as `ResourceDownloader.download` does before it makes a task.
    /// - Parameters:
    ///   - request: The request to answer; its URL and the fields the entry varies on are compared.
    ///   - limit: The largest entry file read here; a larger one is left to `cachedResponse(for:)`, which reads on
    ///     Wire's file threads.
    /// - Returns: The entry; nil on a miss, when its file is larger than `limit` or cannot be read now, or when the
    ///   file does not decode (it is then removed, as `cachedResponse(for:)` would).
    package func cachedResponse(for request: ClientRequest, blockingReadsUpTo limit: Int) -> CachedResponse? {
        let key = Self.key(request.url)
        switch lookUp(key) {
        case .memory(let entry):
            return CacheRules.matches(entry, request) ? entry : nil
        case .miss:
            return nil
        case .disk(let name, let size):
            guard let files, size <= limit else { return nil }
            // The request's own URL when it is the key (no base, no fragment): one URL parse less per hit.
            let parsedURL = request.url.baseURL == nil && request.url.absoluteString == key ? request.url : nil
            // Absent, unreadable (EMFILE) or grown past the limit since it was indexed (a store renamed a larger entry
            // in): a miss, and the file stays; only bytes that do not decode are removed.
            guard let bytes = files.readBlocking(name, upTo: limit) else { return nil }
            guard let entry = CacheEntryCodec.decode(bytes, url: key, parsedURL: parsedURL) else {
                state.withLock { _ = $0.disk.removeValue(forKey: name) }
                files.removeBlocking(name)
                return nil
            }
            keepInMemory(entry, key: key)
            return CacheRules.matches(entry, request) ? entry : nil
        }
    }

    /// Where the entry for `key` is, under one lock: in memory, on disk (its file name and size, the index recording
    /// the use), or nowhere.
    private enum Location {
        case memory(CachedResponse)
        case disk(name: String, size: Int)
        case miss
    }

    private func lookUp(_ key: String) -> Location {
        let name = files.map { _ in Checksum.fileName(for: key) }
        return state.withLock { state in
            if let entry = state.memory.value(forKey: key) { return .memory(entry) }
            guard let name, let size = state.disk.value(forKey: name) else { return .miss }
            return .disk(name: name, size: size)
        }
    }

    /// Stores `entry` as the answer to `request` (replacing the URL's previous entry), recording the request's values
    /// of the fields the response varies on. Nothing is stored for `Vary: *`; an entry larger than a tier's capacity
    /// skips that tier. A disk write that fails leaves the disk without the entry.
    public func storeCachedResponse(_ entry: CachedResponse, for request: ClientRequest) async {
        // A status HTTP cannot carry (a response made by hand, a will-cache hook's) is not stored: the entry format
        // holds three digits, as the wire does.
        guard (100...999).contains(entry.response.statusCode),
            let vary = CacheRules.varyValues(of: request, for: entry.response)
        else { return }
        var entry = entry
        entry.varyValues = vary
        entry.response.metrics = nil
        let key = Self.key(request.url)
        keepInMemory(entry, key: key)
        guard let files else { return }
        let bytes = CacheEntryCodec.encode(entry, url: key)
        let name = Checksum.fileName(for: key)
        guard bytes.count <= diskCapacity else {
            await removeFile(name)
            return
        }
        do throws(IOError) {
            try await files.write(bytes, as: name)
        } catch {
            await removeFile(name)
            return
        }
        let evicted = state.withLock { state in
            state.disk.insert(bytes.count, cost: UInt64(bytes.count), forKey: name)
            return Self.evict(&state.disk, to: diskCapacity)
        }
        for name in evicted { await files.remove(name) }
    }

    /// Removes the entry stored for `request`'s URL from both tiers.
    public func removeCachedResponse(for request: ClientRequest) async {
        await removeCachedResponse(for: request.url)
    }

    /// Removes the entry stored for `url` from both tiers (RFC 9111 §4.4 invalidation).
    public func removeCachedResponse(for url: URL) async {
        let key = Self.key(url)
        state.withLock { _ = $0.memory.removeValue(forKey: key) }
        await removeFile(Checksum.fileName(for: key))
    }

    /// Empties both tiers.
    public func removeAllCachedResponses() async {
        let names = state.withLock { state -> [String] in
            state.memory.removeAll()
            let names = state.disk.keysByAge
            state.disk.removeAll()
            return names
        }
        guard let files else { return }
        for name in names { await files.remove(name) }
    }

    /// The key of `url`: its text without a fragment and without the user name and password of its authority
    /// (`http://user:pw@host/` is keyed as `http://host/`), which would otherwise be written into the entry's file.
    /// Responses to requests with credentials are stored only when RFC 9111 §3.5 lets them be shared.
    static func key(_ url: URL) -> String {
        let text = url.absoluteString
        // By bytes: a `Character` search costs more than the rest of finding an entry's file name.
        var end = text.utf8.endIndex
        if let fragment = text.utf8.firstIndex(of: UInt8(ascii: "#")) { end = fragment }
        let utf8 = text.utf8[..<end]
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")),
            utf8[colon...].starts(with: "://".utf8)
        else { return String(text[..<end]) }
        let authority = utf8.index(colon, offsetBy: 3)
        let authorityEnd = utf8[authority...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? end
        guard let at = utf8[authority..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) else { return String(text[..<end]) }
        return String(text[..<authority]) + String(text[text.utf8.index(after: at)..<end])
    }

    private func keepInMemory(_ entry: CachedResponse, key: String) {
        let cost = entry.cost
        state.withLock { state in
            guard cost <= memoryCapacity else {
                state.memory.removeValue(forKey: key)
                return
            }
            state.memory.insert(entry, cost: UInt64(cost), forKey: key)
            while state.memory.totalCost > UInt64(memoryCapacity), state.memory.removeOldest() != nil {}
        }
    }

    private func removeFile(_ name: String) async {
        guard let files else { return }
        state.withLock { _ = $0.disk.removeValue(forKey: name) }
        await files.remove(name)
    }

    /// Removes least recently used names until `index` is within `capacity`; returns them.
    private static func evict(_ index: inout LRUStore<Int>, to capacity: Int) -> [String] {
        var evicted: [String] = []
        while index.totalCost > UInt64(capacity), let oldest = index.oldestKey {
            index.removeValue(forKey: oldest)
            evicted.append(oldest)
        }
        return evicted
    }
}
