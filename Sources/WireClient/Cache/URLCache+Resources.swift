import FoundationEssentials

extension URLCache {
    /// The cache of the managers resource downloaders make themselves: 20 MiB in memory, 150 MiB on disk at
    /// `$XDG_CACHE_HOME/wireclient.resourcedownloader`, else `~/.cache/…`, else `$TMPDIR/…` (or `/tmp/…`) without a
    /// home. Made on first use, once per process.
    static let resourceDownloader = URLCache(
        memoryCapacity: 20 << 20, diskCapacity: 150 << 20,
        directory: resourceDownloaderDirectory(ProcessInfo.processInfo.environment))

    /// Where the resource downloaders' disk cache lives, given the environment.
    static func resourceDownloaderDirectory(_ environment: [String: String]) -> String {
        let name = "/wireclient.resourcedownloader"
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + name }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.cache" + name }
        let temporary = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return temporary + name
    }
}
