extension String {
    /// The string without leading and trailing spaces and horizontal tabs (HTTP's optional whitespace, RFC 9110
    /// §5.6.3).
    package var trimmingOptionalWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }

    /// The string followed by spaces up to `width` characters; unchanged when it is already that long.
    package func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

extension Substring {
    /// See `String.trimmingOptionalWhitespace`.
    var trimmingOptionalWhitespace: String { String(self).trimmingOptionalWhitespace }
}
