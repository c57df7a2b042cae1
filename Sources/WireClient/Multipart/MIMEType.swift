import FoundationEssentials
import Wire

/// The media type of a file part, from its extension: a built-in table first, then `/etc/mime.types` for
/// extensions the table lacks, else `application/octet-stream` (AFNetworking asks UTType; Linux has no such thing).
package enum MIMEType {
    /// The type for unknown or missing extensions.
    package static let fallback = "application/octet-stream"

    /// The built-in table, by lower-cased extension.
    static let table: [String: String] = [
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
        "svg": "image/svg+xml", "ico": "image/x-icon", "bmp": "image/bmp", "tif": "image/tiff", "tiff": "image/tiff",
        "heic": "image/heic", "txt": "text/plain", "html": "text/html", "htm": "text/html", "css": "text/css",
        "csv": "text/csv", "js": "text/javascript", "json": "application/json", "xml": "application/xml",
        "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar",
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "wav": "audio/wav", "mp4": "video/mp4", "mov": "video/quicktime",
        "plist": "application/x-plist", "bin": "application/octet-stream",
    ]

    /// The system's table (`/etc/mime.types`), read once; empty when the file is missing or unreadable.
    static let system: [String: String] = {
        guard let bytes = try? LocalFiles.contents(atPath: "/etc/mime.types") else { return [:] }
        return parse(String(decoding: bytes, as: UTF8.self))
    }()

    /// The type for the file name or path `name`, by its extension (case-insensitive).
    /// - Parameter name: A file name or path.
    /// - Returns: The media type; `application/octet-stream` when the extension is unknown or absent.
    package static func forFileName(_ name: String) -> String {
        let base = name.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? name
        guard let dot = base.lastIndex(of: "."), dot != base.startIndex else { return fallback }
        let ext = base[base.index(after: dot)...].lowercased()
        guard !ext.isEmpty else { return fallback }
        return table[ext] ?? system[ext] ?? fallback
    }

    /// The extension → type map of a `mime.types` text: `type ext ext…` per line, `#` comments; the first type
    /// naming an extension wins.
    static func parse(_ text: String) -> [String: String] {
        var map: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = content.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count > 1, words[0].contains("/") else { continue }
            for ext in words.dropFirst() where map[ext.lowercased()] == nil {
                map[ext.lowercased()] = String(words[0])
            }
        }
        return map
    }
}
