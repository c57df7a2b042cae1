import FoundationEssentials
import Wire

extension ClientRequest {
    /// A shell command that makes this request with curl: the same request line, header fields and body.
    ///
    /// `-X` appears only when curl would not pick the method by itself (GET without a body, POST with one; HEAD is
    /// `--head`). Every header field is a `-H`; curl's own `User-Agent`, `Accept`, and for a body `Content-Type` and
    /// `Expect`, are switched off (`-H 'Name:'`) when the request does not set them, so curl sends no field WireClient
    /// would not. A field with an empty value is written `-H 'Name;'`, curl's spelling for it. An in-memory body is
    /// `--data-binary` with its exact bytes; one holding a NUL byte, which no shell word can carry, is piped in by
    /// `printf` (`--data-binary @-`); a file body is `--data-binary @path`; a stream body is not read, and a trailing
    /// shell comment says so. The URL comes last, without its fragment (never sent), with `--globoff` when it holds
    /// `[]{}`, which curl would otherwise expand.
    ///
    /// Every word is single-quoted (`'` written `'\''`); a word holding a control byte or bytes that are not UTF-8
    /// is written `$'…'` with `\xHH` escapes, so the command is one line and runs in bash, zsh or ksh as it stands.
    ///
    /// ```swift
    /// ClientRequest(url: URL(string: "http://h/a")!).curlDescription   // curl -H 'User-Agent:' -H 'Accept:' 'http://h/a'
    /// ```
    public var curlDescription: String {
        var words: [[UInt8]] = []
        var prefix = ""
        var suffix = ""
        let sendsBody: Bool
        switch body {
        case nil:
            sendsBody = false
        case .data(let data):
            sendsBody = true
            let bytes = Array(data)
            if bytes.contains(0) {
                prefix = "printf " + ShellWord.quote(ShellWord.printfFormat(bytes)) + " | "
                words += [word("--data-binary"), word("@-")]
            } else {
                // A body starting with `@` would be read as a file name by `--data-binary`; `--data-raw` takes it as is.
                words += [word(bytes.first == UInt8(ascii: "@") ? "--data-raw" : "--data-binary"), bytes]
            }
        case .file(let path):
            sendsBody = true
            words += [word("--data-binary"), word("@" + path)]
        case .composite(let pieces):
            sendsBody = false
            let size = pieces.reduce(Int64(0)) { $0 + $1.count }
            suffix = " # body: \(pieces.count) pieces (\(size) bytes), not included"
        case .stream(let length, _):
            sendsBody = false
            let size = length.map { "\($0) bytes" } ?? "unknown length"
            suffix = " # body: a stream (\(size)), not included"
        }
        var methodWords: [[UInt8]] = []
        if method == "HEAD" && body == nil {
            methodWords = [word("--head")]
        } else if method != (sendsBody ? "POST" : "GET") {
            methodWords = [word("-X"), word(method)]
        }
        var headerWords: [[UInt8]] = []
        for field in headers {
            headerWords += [word("-H"), word(field.value.isEmpty ? field.name + ";" : field.name + ": " + field.value)]
        }
        var defaults = ["User-Agent", "Accept"]
        if body != nil { defaults += ["Content-Type", "Expect"] }
        for name in defaults where !headers.contains(name: name) {
            headerWords += [word("-H"), word(name + ":")]
        }
        let target = url.absoluteString.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        var tail: [[UInt8]] = []
        if target.contains(where: { "[]{}".contains($0) }) { tail.append(word("--globoff")) }
        tail.append(word(String(target)))
        // The options are bare (they hold no character a shell treats specially); every value is quoted.
        let options: Set<[UInt8]> = Set(["-X", "-H", "--head", "--data-binary", "--data-raw", "--globoff"].map(word))
        let quoted = (methodWords + headerWords + words + tail).map {
            options.contains($0) ? String(decoding: $0, as: UTF8.self) : ShellWord.quote($0)
        }
        return prefix + (["curl"] + quoted).joined(separator: " ") + suffix
    }
}

private func word(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Quoting for a POSIX-style shell: the forms `ClientRequest.curlDescription` writes.
enum ShellWord {
    /// `bytes` as one shell word: `'…'` when every byte is printable UTF-8 text, `$'…'` with escapes otherwise.
    /// A NUL byte cannot be in a word (the shell ends the string there); callers keep it out.
    static func quote(_ bytes: [UInt8]) -> String {
        let plain = String(validating: bytes, as: UTF8.self) != nil && !bytes.contains { $0 < 0x20 || $0 == 0x7F }
        if plain {
            return "'" + String(decoding: bytes, as: UTF8.self).replacing("'", with: #"'\''"#) + "'"
        }
        var output = "$'"
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "'"): output += #"\'"#
            case UInt8(ascii: "\\"): output += #"\\"#
            case 0x0A: output += #"\n"#
            case 0x0D: output += #"\r"#
            case 0x09: output += #"\t"#
            case 0x20...0x7E: output.unicodeScalars.append(Unicode.Scalar(byte))
            default: output += #"\x"# + hex(byte)
            }
        }
        return output + "'"
    }

    /// A `printf` format that writes exactly `bytes`: `%` doubled, `\` doubled, every byte outside printable ASCII
    /// as a three-digit octal escape (POSIX printf's `\ddd`).
    static func printfFormat(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "%"): output += Array("%%".utf8)
            case UInt8(ascii: "\\"): output += Array(#"\\"#.utf8)
            case 0x20...0x7E: output.append(byte)
            default:
                output.append(UInt8(ascii: "\\"))
                for shift: UInt8 in [6, 3, 0] { output.append(UInt8(ascii: "0") + ((byte >> shift) & 7)) }
            }
        }
        return output
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
