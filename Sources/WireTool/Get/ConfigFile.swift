/// curl's `-K`/`--config` file syntax, read into one option and its value per line; `FetchOptions` then takes each
/// pair with the parser it uses for the command line, so a file says nothing the command line could not.
///
/// A line is `name value`, where the name is a long option with or without its leading `--` (`header`, `--header`)
/// or a short one (`-H`); without dashes, `=` or `:` may separate the name from its value too (`url = "…"`,
/// `header: "…"`). A value in double quotes takes curl's escapes (`\t`, `\n`, `\r`, `\v`; a backslash before any
/// other character is that character) and ends at the closing quote; an unquoted value ends at the first blank.
/// Lines whose first non-blank character is `#` (or curl's other comment marks, `/` and `*`) are comments; blank
/// lines are skipped.
struct ConfigFile: Equatable, Sendable {
    /// One option line.
    struct Line: Equatable, Sendable {
        /// The line's number, from 1.
        var number: Int
        /// The option as written (`header`, `--header`, `-H`).
        var option: String
        /// The value; nil when the line has none (an unquoted empty value), `""` for `""`.
        var value: String?
        /// Whether an unquoted value is followed by more than a comment: curl warns that the rest is dropped.
        var unquotedWhitespace = false
    }

    /// The option lines, in order.
    var lines: [Line]

    /// Reads `bytes`, a whole file. Every line reads as something (an unterminated quote ends at the line's end, as
    /// in curl); whether its option exists is for the option parser to say.
    init(_ bytes: [UInt8]) {
        var lines: [Line] = []
        var number = 0
        for text in bytes.split(separator: ASCII.newline, omittingEmptySubsequences: false) {
            number += 1
            if let line = Self.line(text, number: number) { lines.append(line) }
        }
        self.lines = lines
    }

    private enum ASCII {
        static let newline = UInt8(ascii: "\n")
        static let quote = UInt8(ascii: "\"")
        static let backslash = UInt8(ascii: "\\")
        static let dash = UInt8(ascii: "-")
    }

    /// curl's blanks (C's `isspace`): a carriage return before the newline is one too.
    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    /// The line's option and value; nil for a comment or a blank line.
    private static func line(_ text: ArraySlice<UInt8>, number: Int) -> Line? {
        var index = text.startIndex
        func skip(while condition: (UInt8) -> Bool) {
            while index < text.endIndex, condition(text[index]) { index += 1 }
        }
        skip(while: isBlank)
        guard index < text.endIndex, !"#/*".utf8.contains(text[index]) else { return nil }
        // `=` and `:` separate only after a name without dashes: `-H` and `--header` end at a blank.
        let dashed = text[index] == ASCII.dash
        let isSeparator = { (byte: UInt8) in !dashed && (byte == UInt8(ascii: "=") || byte == UInt8(ascii: ":")) }
        let optionStart = index
        skip { !isBlank($0) && !isSeparator($0) }
        let option = String(decoding: text[optionStart..<index], as: UTF8.self)
        skip { isBlank($0) || isSeparator($0) }
        var line = Line(number: number, option: option, value: nil)
        if index < text.endIndex, text[index] == ASCII.quote {
            line.value = unquoted(text[(index + 1)...])
            return line
        }
        let valueStart = index
        skip { !isBlank($0) }
        if index > valueStart { line.value = String(decoding: text[valueStart..<index], as: UTF8.self) }
        skip(while: isBlank)
        line.unquotedWhitespace = index < text.endIndex && text[index] != UInt8(ascii: "#")
        return line
    }

    /// A quoted value after its opening quote, to the closing one (or the line's end), escapes resolved.
    private static func unquoted(_ text: ArraySlice<UInt8>) -> String {
        var value: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex, text[index] != ASCII.quote {
            var byte = text[index]
            index += 1
            if byte == ASCII.backslash {
                guard index < text.endIndex else { break }
                byte = text[index]
                index += 1
                switch byte {
                case UInt8(ascii: "t"): byte = 0x09
                case UInt8(ascii: "n"): byte = 0x0A
                case UInt8(ascii: "r"): byte = 0x0D
                case UInt8(ascii: "v"): byte = 0x0B
                default: break
                }
            }
            value.append(byte)
        }
        return String(decoding: value, as: UTF8.self)
    }
}
