import FoundationEssentials
import Wire

/// Reads the small text files of sysfs and procfs. A missing or unreadable file is nil, not an error: the kernel
/// leaves out what does not apply (no `wireless/` on a wired interface).
enum SysfsFile {
    /// The file's text, or nil.
    static func read(_ path: String) -> String? {
        guard let bytes = try? LocalFiles.contents(atPath: path) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether anything exists at `path`.
    static func exists(_ path: String) -> Bool { LocalFiles.kind(atPath: path) != nil }

    /// The names in the directory at `path`, sorted; empty when it cannot be listed.
    static func names(in path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// `text` without leading and trailing white space.
    static func trimmed(_ text: some StringProtocol) -> Substring {
        let characters = Substring(text)
        let start = characters.firstIndex(where: { !$0.isWhitespace }) ?? characters.endIndex
        let end = characters.lastIndex(where: { !$0.isWhitespace }).map { characters.index(after: $0) } ?? start
        return characters[start..<max(start, end)]
    }
}
