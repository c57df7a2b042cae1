import FoundationEssentials
import Glibc
import Wire

/// A download's temporary file and its move to the destination. Every call runs on Wire's file threads
/// (`AsyncFile`), never on an event loop.
enum DownloadFile {
    /// `$TMPDIR/WireClient` (or `/tmp/WireClient`): where downloads in progress live.
    static var directory: String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/WireClient"
    }

    /// Creates `<directory>/<UUID>.download`, readable by its owner only (0600), in a directory only its owner may
    /// enter (0700).
    /// - Throws: `.cannotWriteToFile` with the `IOError`.
    static func create(url: URL) async throws(ClientError) -> AsyncFile {
        let directory = directory
        let path = "\(directory)/\(UUID().uuidString).download"
        do {
            try await AsyncFile.makeDirectory(directory, permissions: 0o700)
            return try await AsyncFile.open(path, mode: .createNew, permissions: 0o600)
        } catch {
            throw ClientError(
                .cannotWriteToFile, failingURL: url, underlying: error,
                failureReason: "cannot create the download's temporary file \(path): \(error)")
        }
    }

    /// Moves `source` to `destination`: `rename(2)` when replacing is allowed, `link(2)` + `unlink(2)` when it is
    /// not (so an existing destination is never overwritten), copy + unlink across file systems.
    /// - Throws: `.cannotMoveFile` with the `IOError` that stopped it.
    static func move(_ source: String, to destination: String, replacing: Bool, url: URL) async throws(ClientError) {
        do {
            do {
                if replacing {
                    try await AsyncFile.rename(source, to: destination)
                } else {
                    try await AsyncFile.link(source, to: destination)
                    try await AsyncFile.remove(source)
                }
            } catch  where error.errno == Errno(rawValue: EXDEV) || (!replacing && error.errno == Errno(rawValue: EPERM)) {
                try await copy(source, to: destination, replacing: replacing)
                try await AsyncFile.remove(source)
            }
        } catch {
            throw ClientError(
                .cannotMoveFile, failingURL: url, underlying: error,
                failureReason: "cannot move the download to \(destination): \(error)")
        }
    }

    /// Copies `source` to `destination` in 1 MiB pieces; a partial copy is removed.
    private static func copy(_ source: String, to destination: String, replacing: Bool) async throws(IOError) {
        let reader = try await AsyncFile.open(source, mode: .read)
        let writer: AsyncFile
        do {
            writer = try await AsyncFile.open(destination, mode: replacing ? .truncate : .createNew, permissions: 0o600)
        } catch {
            try? await reader.close()
            throw error
        }
        do {
            var offset = 0
            while true {
                let piece = try await reader.read(at: offset, upTo: 1 << 20)
                if piece.readableBytes == 0 { break }
                try await writer.write(piece)
                offset += piece.readableBytes
            }
            try await writer.close()
            try await reader.close()
        } catch {
            try? await writer.close()
            try? await reader.close()
            try? await AsyncFile.remove(destination)
            throw error
        }
    }
}
