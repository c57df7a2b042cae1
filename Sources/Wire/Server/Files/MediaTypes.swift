/// Content-Type by file extension.
enum MediaTypes {
    private static let types: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8", "css": "text/css; charset=utf-8",
        "js": "text/javascript; charset=utf-8", "mjs": "text/javascript; charset=utf-8",
        "json": "application/json", "txt": "text/plain; charset=utf-8", "md": "text/markdown; charset=utf-8",
        "xml": "application/xml", "csv": "text/csv; charset=utf-8", "svg": "image/svg+xml", "png": "image/png",
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp", "ico": "image/x-icon",
        "avif": "image/avif", "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip",
        "tar": "application/x-tar", "wasm": "application/wasm", "woff": "font/woff", "woff2": "font/woff2",
        "ttf": "font/ttf", "otf": "font/otf", "mp4": "video/mp4", "webm": "video/webm", "mp3": "audio/mpeg",
        "ogg": "audio/ogg", "wav": "audio/wav",
    ]

    static func type(forPath path: String) -> String {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return "application/octet-stream" }
        return types[path[path.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }
}
