/// curl's path handling: `.` and `..` segments removed (RFC 3986 §5.2.4) unless `--path-as-is`.
enum URLPath {
    /// `url` (absolute, with a scheme) with the dot segments of its path removed; the query and fragment unchanged.
    static func removingDotSegments(fromURL url: String) -> String {
        let bytes = Array(url.utf8)
        guard let separator = bytes.firstRange(of: Array("://".utf8))?.upperBound else { return url }
        guard
            let pathStart = bytes[separator...].firstIndex(where: {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            }),
            bytes[pathStart] == UInt8(ascii: "/")
        else { return url }
        let pathEnd = bytes[pathStart...].firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        let path = String(decoding: bytes[pathStart..<pathEnd], as: UTF8.self)
        let cleaned = removingDotSegments(path)
        guard cleaned != path else { return url }
        return String(decoding: bytes[..<pathStart], as: UTF8.self) + cleaned + String(decoding: bytes[pathEnd...], as: UTF8.self)
    }

    /// RFC 3986 §5.2.4's algorithm over an absolute path.
    static func removingDotSegments(_ path: String) -> String {
        var input = Substring(path)
        var output: [Substring] = []
        while !input.isEmpty {
            if input.hasPrefix("../") {
                input = input.dropFirst(3)
            } else if input.hasPrefix("./") {
                input = input.dropFirst(2)
            } else if input.hasPrefix("/./") {
                input = input.dropFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") {
                input = input.dropFirst(3)
                if !output.isEmpty { output.removeLast() }
            } else if input == "/.." {
                input = "/"
                if !output.isEmpty { output.removeLast() }
            } else if input == "." || input == ".." {
                input = ""
            } else {
                // The first segment, with its leading '/', up to the next '/'.
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return output.joined()
    }
}
