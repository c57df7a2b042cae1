extension StringProtocol {
    /// The text without leading and trailing spaces and horizontal tabs (HTTP's optional whitespace, RFC 9110
    /// §5.6.3), for the parts of a field value the parser does not trim: list items, parameters. The one copy for
    /// the server's static files and WireClient's field parsing.
    package var trimmingOWS: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
