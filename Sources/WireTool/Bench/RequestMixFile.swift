import Wire

/// A request mix for `wire bench --requests-file`: the requests a run sends in turn, each as
/// often as its weight says (vegeta's targets in its HTTP format, with a weight).
///
/// ```
/// # A comment.
/// GET /search?q=wire weight=8
/// Accept: application/json
///
/// POST /items weight=2
/// Content-Type: application/json
/// @bodies/item.json
///
/// HEAD /health
/// ```
///
/// Requests are separated by blank lines. Each starts with `METHOD TARGET`, optionally followed by
/// `weight=N` (a whole number from 1; 1 when absent); `TARGET` is a path on the bench URL's
/// origin (`/…`) or an absolute URL of that origin. Then come header lines `Name: value`, and at
/// most one `@FILE` line: the body, read from FILE (relative to the mix file's folder), sent with
/// its `Content-Length`. Lines starting with `#` are comments.
package struct RequestMixFile {
    /// One request of the file.
    package struct Entry {
        package var method: HTTPMethod
        package var url: HTTPURL
        package var headers: HTTPHeaders
        package var body: [UInt8]?
        package var weight: Int
        /// The line where the request starts, for messages.
        package var line: Int
    }

    /// The file's requests, in order.
    package var entries: [Entry]

    /// The largest weight, and of all weights added: a cycle of the mix is laid out in memory.
    package static let maximumTotalWeight = 100_000

    /// A file that is not a request mix; the message names the line.
    package struct ParseError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Reads `text` against `origin` (the bench URL); `readBody` reads an `@FILE` path as written.
    package init(
        text: String,
        origin: HTTPURL,
        readBody: (String) throws -> [UInt8]
    ) throws(ParseError) {
        entries = []
        var current: Entry?
        func finish() {
            if let entry = current { entries.append(entry) }
            current = nil
        }
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = offset + 1
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            if line.hasPrefix("#") { continue }
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) {
                finish()
                continue
            }
            guard var entry = current else {
                current = try Self.requestLine(line, number: number, origin: origin)
                continue
            }
            if line.hasPrefix("@") {
                guard entry.body == nil else { throw ParseError(description: "line \(number): a second body for one request") }
                let path = String(line.dropFirst())
                do {
                    entry.body = try readBody(path)
                } catch {
                    throw ParseError(description: "line \(number): cannot read the body \(path) (\(error))")
                }
            } else {
                guard let (name, value) = BenchArguments.header(String(line)) else {
                    throw ParseError(description: "line \(number): expected 'Name: value', '@FILE' or a blank line")
                }
                entry.headers.add(name: name, value: value)
            }
            current = entry
        }
        finish()
        guard !entries.isEmpty else { throw ParseError(description: "no request in the file") }
        let total = entries.reduce(0) { $0 + $1.weight }
        guard total <= Self.maximumTotalWeight else {
            throw ParseError(description: "the weights add up to \(total), more than \(Self.maximumTotalWeight)")
        }
    }

    private static func requestLine(_ line: Substring, number: Int, origin: HTTPURL) throws(ParseError) -> Entry {
        var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        var weight = 1
        if let last = words.last, last.hasPrefix("weight=") {
            guard let value = Int(last.dropFirst("weight=".count)), value >= 1 else {
                throw ParseError(description: "line \(number): \(last): a weight is a whole number from 1")
            }
            weight = value
            words.removeLast()
        }
        guard words.count == 2 else {
            throw ParseError(description: "line \(number): expected 'METHOD TARGET [weight=N]'")
        }
        let method = String(words[0])
        guard method.allSatisfy({ $0.isLetter || $0 == "-" || $0 == "_" }), HTTPMethod(method) != .connect else {
            throw ParseError(description: "line \(number): \(method) is not a method to benchmark")
        }
        let target = String(words[1])
        let url: HTTPURL
        do {
            url = target.hasPrefix("/") ? try origin.resolving(target) : try HTTPURL(target)
        } catch {
            throw ParseError(description: "line \(number): \(target): \(error)")
        }
        guard url.isSameOrigin(as: origin) else {
            throw ParseError(description: "line \(number): \(target) is not on \(origin)'s origin, where the connections go")
        }
        return Entry(method: HTTPMethod(method), url: url, headers: HTTPHeaders(), body: nil, weight: weight, line: number)
    }
}
