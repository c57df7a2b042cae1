/// The request-target forms of RFC 9112 §3.2 and the Host field's syntax (RFC 9110 §7.2).
extension HTTP1Parser {
    /// Host = uri-host [ ":" port ] (RFC 9110 §7.2, RFC 3986 §3.2.2): the index of the first bad byte, or nil.
    /// An empty value is valid (RFC 9112 §3.2: sent when the target URI has no authority).
    static func invalidHostIndex(_ value: UnsafeBufferPointer<UInt8>, requirePort: Bool) -> Int? {
        let table = CharacterClasses.table
        var index = 0
        if index < value.count && value[index] == ASCII.leftBracket {
            // IP-literal: IPv6address or IPvFuture, loosely: hex digits, ":", ".", and IPvFuture's characters.
            index += 1
            let literalStart = index
            while index < value.count && value[index] != ASCII.rightBracket {
                let byte = value[index]
                let allowed =
                    byte == ASCII.colon
                    || (table[byte] & CharacterClasses.regName != 0 && byte != ASCII.percent)
                guard allowed else { return index }
                index += 1
            }
            guard index < value.count, index > literalStart else { return index }
            index += 1
        } else {
            while index < value.count && table[value[index]] & CharacterClasses.regName != 0 {
                if value[index] == ASCII.percent {
                    guard index + 2 < value.count,
                        CharacterClasses.hexValue(value[index + 1]) != nil,
                        CharacterClasses.hexValue(value[index + 2]) != nil
                    else { return index }
                    index += 2
                }
                index += 1
            }
        }
        if index == value.count {
            return requirePort ? index : nil
        }
        guard value[index] == ASCII.colon else { return index }
        index += 1
        while index < value.count {
            guard ASCII.isDigit(value[index]) else { return index }
            index += 1
        }
        return nil
    }

    /// The index of the "@" ending a userinfo in the authority of an absolute URI whose scheme ends at `colon`, if any.
    private static func userinfoEnd(_ target: UnsafeBufferPointer<UInt8>, afterSchemeColon colon: Int) -> Int? {
        guard colon + 2 < target.count, target[colon + 1] == ASCII.slash, target[colon + 2] == ASCII.slash else {
            return nil
        }
        var index = colon + 3
        while index < target.count {
            switch target[index] {
            case ASCII.at: return index
            case ASCII.slash, UInt8(ascii: "?"), UInt8(ascii: "#"): return nil
            default: index += 1
            }
        }
        return nil
    }

    /// request-target forms (RFC 9112 §3.2): origin-form for most methods, authority-form only for CONNECT,
    /// asterisk-form only for OPTIONS, absolute-form for any but CONNECT. Percent-escapes must be complete.
    func validateTarget(
        _ bytes: UnsafeBufferPointer<UInt8>,
        method: HTTPMethod,
        streamOffset: Int
    ) throws(HTTP1ParseError) {
        let start = scanner.targetStart
        let target = UnsafeBufferPointer(rebasing: bytes[start..<scanner.targetEnd])
        let offset = streamOffset + start
        if method == .connect {
            // authority-form is uri-host ":" port, without userinfo (RFC 9112 §3.2.3).
            if let at = target.firstIndex(of: ASCII.at) {
                throw HTTP1ParseError(.userinfoInTarget, at: offset + at)
            }
            if let bad = HTTP1Parser.invalidHostIndex(target, requirePort: true) {
                throw HTTP1ParseError(.invalidTarget, at: offset + bad)
            }
            return
        }
        if target.count == 1 && target[0] == ASCII.asterisk {
            guard method == .options else { throw HTTP1ParseError(.invalidTarget, at: offset) }
            return
        }
        var index = 0
        if target[0] == ASCII.slash {
            // origin-form: "[" and "]" are only allowed inside an authority's IP literal.
            while index < target.count {
                let byte = target[index]
                if byte == ASCII.percent {
                    guard index &+ 2 < target.count,
                        CharacterClasses.hexValue(target[index &+ 1]) != nil,
                        CharacterClasses.hexValue(target[index &+ 2]) != nil
                    else { throw HTTP1ParseError(.invalidTarget, at: offset + index) }
                    index &+= 2
                } else if byte == ASCII.leftBracket || byte == ASCII.rightBracket {
                    throw HTTP1ParseError(.invalidTarget, at: offset + index)
                }
                index &+= 1
            }
            return
        } else {
            // absolute-form: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
            guard ASCII.isAlpha(target[0]) else { throw HTTP1ParseError(.invalidTarget, at: offset) }
            index = 1
            while index < target.count {
                let byte = target[index]
                if byte == ASCII.colon { break }
                guard
                    ASCII.isAlpha(byte) || ASCII.isDigit(byte) || byte == UInt8(ascii: "+")
                        || byte == UInt8(ascii: "-") || byte == ASCII.dot
                else { throw HTTP1ParseError(.invalidTarget, at: offset + index) }
                index += 1
            }
            guard index < target.count else { throw HTTP1ParseError(.invalidTarget, at: offset + index) }
            // RFC 9110 §4.2.4: a recipient SHOULD treat userinfo in an http(s) URI as an error; it also names a
            // different host to a reader that stops at the "@" than to one that does not.
            if let at = HTTP1Parser.userinfoEnd(target, afterSchemeColon: index) {
                throw HTTP1ParseError(.userinfoInTarget, at: offset + at)
            }
        }
        while index < target.count {
            if target[index] == ASCII.percent {
                guard index + 2 < target.count,
                    CharacterClasses.hexValue(target[index + 1]) != nil,
                    CharacterClasses.hexValue(target[index + 2]) != nil
                else { throw HTTP1ParseError(.invalidTarget, at: offset + index) }
                index += 2
            }
            index += 1
        }
    }
}
