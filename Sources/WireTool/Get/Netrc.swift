import Glibc
import Wire

/// A netrc file (`-n`, `--netrc-file`, `--netrc-optional`), read as curl 7.88 reads it: whitespace-separated tokens,
/// `machine NAME` (or `default`) followed by `login` and `password`, `macdef NAME` skipped to the next empty line,
/// `#` starting a comment, and double-quoted tokens with `\"`, `\\`, `\n`, `\r` and `\t` escapes.
///
/// The file holds secrets: nothing of its contents goes into a message, only its path.
struct Netrc: Sendable {
    /// One machine's credentials.
    struct Entry: Equatable, Sendable {
        /// The host, lower-cased; nil for `default`.
        var machine: String?
        /// The user name; empty when the entry names none.
        var login: String
        /// The password; empty when the entry names none.
        var password: String
    }

    /// The entries, in the file's order.
    let entries: [Entry]

    /// Why a netrc file cannot be read; curl's `.netrc parser error` (exit 26).
    struct SyntaxError: Error, Equatable {
        /// The 1-based line of the token that is wrong.
        var line: Int
    }

    /// Parses `text`.
    /// - Throws: `SyntaxError` for a quoted token without its closing quote.
    init(parsing text: [UInt8]) throws(SyntaxError) {
        var tokens = Tokens(bytes: text)
        var entries: [Entry] = []
        var current: Entry?
        while let token = try tokens.next() {
            switch token {
            case "machine", "default":
                if let current { entries.append(current) }
                let machine = token == "machine" ? try tokens.next()?.lowercased() : nil
                current = Entry(machine: machine, login: "", password: "")
            case "login":
                let value = try tokens.next() ?? ""
                current?.login = value
            case "password":
                let value = try tokens.next() ?? ""
                current?.password = value
            case "macdef":
                tokens.skipMacro()
            default:
                // `account` and its value, and anything curl does not know, are skipped.
                continue
            }
        }
        if let current { entries.append(current) }
        self.entries = entries
    }

    /// The credentials for `host`: the first `machine` entry for it (with `login`, the first with that login), or the
    /// `default` entry; nil when none fits or the entry has no login.
    func entry(forHost host: String, login: String?) -> Entry? {
        let host = host.lowercased()
        let candidates = entries.filter { $0.machine == host } + entries.filter { $0.machine == nil }
        let match = candidates.first { entry in login.map { entry.login == $0 } ?? true }
        guard let match, !match.login.isEmpty || login != nil else { return nil }
        return match
    }

    /// The file the options name, read and parsed; nil when the options ask for none, or when the file is missing or
    /// cannot be read (curl 7.88 goes on without credentials then, `-n` and `--netrc-optional` alike).
    ///
    /// - Throws: `TransferFailure` 26 for a file that cannot be parsed.
    static func load(_ options: FetchOptions.NetrcOptions) throws(TransferFailure) -> Netrc? {
        guard options.enabled else { return nil }
        guard let path = options.file ?? defaultPath() else { return nil }
        guard let text = try? LocalFiles.contents(atPath: path) else { return nil }
        do {
            return try Netrc(parsing: text)
        } catch {
            throw TransferFailure(status: ExitStatus.readError, message: ".netrc parser error: \(path) line \(error.line)")
        }
    }

    /// `$HOME/.netrc`, or the password database's home directory when `HOME` is unset.
    private static func defaultPath() -> String? {
        if let home = getenv("HOME") { return String(cString: home) + "/.netrc" }
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory) + "/.netrc"
    }

    /// The token reader.
    private struct Tokens {
        let bytes: [UInt8]
        var index = 0
        var line = 1

        /// The next token; nil at the end.
        mutating func next() throws(SyntaxError) -> String? {
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\n") { line += 1 }
                if byte == UInt8(ascii: "#") {
                    while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
                    continue
                }
                guard Self.isBlank(byte) else { break }
                index += 1
            }
            guard index < bytes.count else { return nil }
            var token: [UInt8] = []
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                while true {
                    guard index < bytes.count else { throw SyntaxError(line: line) }
                    var byte = bytes[index]
                    index += 1
                    if byte == UInt8(ascii: "\"") { break }
                    if byte == UInt8(ascii: "\\"), index < bytes.count {
                        byte = bytes[index]
                        index += 1
                        switch byte {
                        case UInt8(ascii: "n"): byte = UInt8(ascii: "\n")
                        case UInt8(ascii: "r"): byte = UInt8(ascii: "\r")
                        case UInt8(ascii: "t"): byte = UInt8(ascii: "\t")
                        default: break
                        }
                    }
                    token.append(byte)
                }
            } else {
                while index < bytes.count, !Self.isBlank(bytes[index]) {
                    token.append(bytes[index])
                    index += 1
                }
            }
            return String(decoding: token, as: UTF8.self)
        }

        /// Skips a `macdef`'s name and body: everything up to the next empty line.
        mutating func skipMacro() {
            var previous: UInt8 = 0
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "\n") {
                    line += 1
                    if previous == UInt8(ascii: "\n") { return }
                }
                if byte != UInt8(ascii: "\r") { previous = byte }
            }
        }

        static func isBlank(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
        }
    }
}
