/// curl's warning lines: `Warning: ` before the message, which is broken at the last space that keeps each line within
/// 79 columns, every piece starting with `Warning: ` again (curl 7.88's `warnf`).
package enum CurlWarning {
    /// The width curl fills, its prefix included.
    static let columns = 79
    static let prefix = "Warning: "

    /// `message` (without its line end) as curl writes it, with a line end after each piece.
    package static func text(_ message: String) -> String {
        // curl's messages carry their own "\n", which counts in the length and is a place to break.
        var rest = Array((message + "\n").utf8)[...]
        let width = columns - prefix.utf8.count
        var out = ""
        while !rest.isEmpty {
            out += prefix
            guard rest.count > width else {
                out += String(decoding: rest, as: UTF8.self)
                break
            }
            var cut = rest.startIndex + width - 1
            while cut > rest.startIndex, !Self.isSpace(rest[cut]) { cut -= 1 }
            // No space to break at: cut at the width.
            if cut == rest.startIndex { cut = rest.startIndex + width - 1 }
            out += String(decoding: rest[...cut], as: UTF8.self) + "\n"
            rest = rest[(cut + 1)...]
        }
        return out
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }
}
