import FoundationEssentials
import Wire

/// The files of a disk cache: one file per entry, named by `Checksum.fileName(for:)`, written whole to a temporary
/// file and renamed into place, and read whole. A process killed at any moment leaves an entry whole or absent (the
/// rename is atomic); after a crash of the system an entry may come back short or zeroed, which its length and
/// checksum turn into a miss, so nothing is synced: an `fsync` per stored response would cost more than the network
/// request it saves. Reads and writes run on Wire's file threads (`AsyncFile`), or, for a caller that must not
/// suspend, a small entry is read on its own thread (`readBlocking`); the directory scan lists with `FileManager` and
/// reads sizes and times, and access-time updates set them, through Wire's `LocalFiles`.
struct CacheDirectory: Sendable {
    /// One entry file found by `scan()`.
    struct Found {
        var name: String
        var size: Int
        var lastAccess: Date
    }

    /// The prefix of temporary files; anything with it found at open is a write a crash interrupted.
    static let temporaryPrefix = ".partial-"
    /// A file larger than this is not a cache entry this code wrote (entries are bounded by the disk capacity).
    let largestEntry: Int
    let path: String

    /// Creates the directory (and its parents) when missing, readable by its owner only (0700: the entries hold
    /// responses, which may be private, and are 0600 themselves); nil when that fails, and the cache keeps memory
    /// only. A directory already there keeps its mode.
    init?(path: String, largestEntry: Int) {
        do throws(IOError) {
            try LocalFiles.makeDirectories(atPath: path, permissions: 0o700)
        } catch {
            return nil
        }
        self.path = path
        self.largestEntry = largestEntry
    }

    /// The entry files, oldest access first; interrupted temporary files are removed, foreign names left alone.
    func scan() -> [Found] {
        let files = FileManager.default
        var found: [Found] = []
        for name in (try? files.contentsOfDirectory(atPath: path)) ?? [] {
            let full = path + "/" + name
            if name.hasPrefix(Self.temporaryPrefix) {
                try? files.removeItem(atPath: full)
                continue
            }
            guard Self.isEntryName(name), let status = LocalFiles.regularFileStatus(atPath: full) else { continue }
            let size = status.size
            let accessed = Date(timeIntervalSince1970: status.modified)
            found.append(Found(name: name, size: size, lastAccess: accessed))
        }
        return found.sorted { $0.lastAccess < $1.lastAccess }
    }

    /// The whole content of entry `name`; nil when absent, unreadable or larger than any entry.
    func read(_ name: String) async -> [UInt8]? {
        guard let file = try? await AsyncFile.open(path + "/" + name, mode: .read) else { return nil }
        var content: [UInt8]?
        if let size = try? await file.size(), size <= largestEntry, let bytes = try? await file.read(at: 0, upTo: size),
            bytes.readableBytes == size
        {
            content = bytes.readableBytesArray
        }
        try? await file.close()
        return content
    }

    /// The whole content of entry `name` if it is at most `limit` bytes, read on the calling thread (open, fstat,
    /// read, close), recording the use in its modification time on the way (`futimens`) when that is more than a
    /// second old: the order the index is rebuilt in at the next open keeps its one-second grain, and a burst of hits
    /// costs one call less each. Nil when absent, unreadable or larger.
    func readBlocking(_ name: String, upTo limit: Int) -> [UInt8]? {
        LocalFiles.smallFileContents(atPath: path + "/" + name, maximumSize: min(limit, largestEntry), touchingAfter: 1)
    }

    /// Removes entry `name`, if present, on the calling thread.
    func removeBlocking(_ name: String) {
        try? FileManager.default.removeItem(atPath: path + "/" + name)
    }

    /// Replaces entry `name` with `bytes`: a temporary file, written, closed and renamed over the entry.
    func write(_ bytes: [UInt8], as name: String) async throws(IOError) {
        let temporary = path + "/" + Self.temporaryPrefix + ReceiptIdentifiers.next().uuidString
        do throws(IOError) {
            let file = try await AsyncFile.open(temporary, mode: .createNew, permissions: 0o600)
            do throws(IOError) {
                try await file.write(ByteBuffer(bytes: bytes))
                try await file.close()
            } catch {
                try? await file.close()
                throw error
            }
            try await AsyncFile.rename(temporary, to: path + "/" + name, syncingDirectory: false)
        } catch {
            try? await AsyncFile.remove(temporary)
            throw error
        }
    }

    /// Removes entry `name`, if present.
    func remove(_ name: String) async {
        try? await AsyncFile.remove(path + "/" + name)
    }

    /// Records a use of entry `name` in its modification time, which orders the index rebuilt at the next open.
    func touch(_ name: String) {
        _ = LocalFiles.touch(atPath: path + "/" + name)
    }

    /// Whether `name` has the form of an entry file: 32 lower-case hex digits.
    static func isEntryName(_ name: String) -> Bool {
        name.utf8.count == 32 && name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
