/// A resumable scanner for one head (start line plus field section) or one trailer section.
///
/// It validates every byte as it goes, so a fault is reported at the offending byte as soon as it arrives, and it
/// records where each field's name and value lie instead of copying them. Offsets are relative to the first byte
/// of the section, which the caller re-presents at index 0 until the section is complete; `position` remembers how
/// far scanning got, so a head trickled in one byte at a time is scanned once, not quadratically (picohttpparser's
/// `last_len` countermeasure against slowloris).
package struct HTTP1HeadScanner: Sendable {
    /// What the section starts with.
    enum Mode: Sendable, Equatable {
        /// A request line, possibly after empty lines (RFC 9112 §2.2).
        case request
        /// A status line.
        case response
        /// No start line: a trailer section (RFC 9112 §7.1.2).
        case trailers
    }

    /// Where scanning stands. Every phase can resume at any byte.
    enum Phase: Sendable, Equatable {
        case leadingEmptyLine
        case leadingLineFeed
        case method
        case target
        case version
        case startLineTrailingWhitespace
        case statusLine
        case reason
        case startLineLineFeed
        case lineStart
        case name
        case valueLeadingWhitespace
        case value
        case valueLineFeed
        case finalLineFeed
    }

    /// Where one field's name and value lie, as offsets from the section's first byte.
    struct FieldSpan: Sendable {
        var nameStart: Int
        var nameLength: Int
        var valueStart: Int
        var valueLength: Int
    }

    /// The result of one scan call.
    enum Outcome: Sendable {
        /// More bytes are needed; the first `consumable` bytes (ignored empty lines) may be dropped.
        case incomplete(consumable: Int)
        /// The section ends just before `end`.
        case complete(end: Int)
    }

    private(set) var mode: Mode
    private(set) var phase: Phase
    /// Next byte to examine.
    private var position = 0
    /// First byte of the start line (after ignored empty lines).
    private(set) var headStart = 0
    private(set) var methodEnd = 0
    private(set) var targetStart = 0
    private(set) var targetEnd = 0
    private var versionStart = 0
    private(set) var version = HTTPVersion.http1_1
    private(set) var statusCode = 0
    private(set) var reasonStart = 0
    private(set) var reasonEnd = 0
    /// Start of the current line; after completion, the start of the final empty line.
    private(set) var lineStart = 0
    private var nameStart = 0
    private var nameEnd = 0
    private var valueStart = 0
    private var valueEnd = 0
    /// Where each field's name and value lie: the first `fieldCount` slots of `fieldSlots`.
    var fields: ArraySlice<FieldSpan> { fieldSlots[..<fieldCount] }
    /// The fields' storage, kept across messages: slots are overwritten in place, and the array grows only when a
    /// head has more fields than any before it. (An append per field checked uniqueness and capacity out of line,
    /// about 140 instructions a field; a store into a kept slot is a few.)
    private var fieldSlots: [FieldSpan] = []
    /// How many slots of `fieldSlots` the current section uses.
    private var fieldCount = 0
    /// Repairs made, at most one per kind; absolute offsets.
    private(set) var repairs: [HTTP1Repair] = []
    /// Whether some value contains an obs-fold that must become SP in the copy.
    private(set) var needsUnfolding = false

    /// Creates a scanner for a section starting with `mode`.
    init(mode: Mode) {
        self.mode = mode
        self.phase = HTTP1HeadScanner.initialPhase(for: mode)
    }

    private static func initialPhase(for mode: Mode) -> Phase {
        switch mode {
        case .request: return .leadingEmptyLine
        case .response: return .statusLine
        case .trailers: return .lineStart
        }
    }

    /// Room for 16 fields before the field array grows.
    static let initialFieldCapacity = 16

    /// Gives back the field array's storage, for a connection that goes idle between messages.
    mutating func releaseStorage() {
        fieldSlots = []
        fieldCount = 0
    }

    /// Prepares for a new section, keeping the field array's capacity.
    mutating func reset(mode: Mode) {
        self.mode = mode
        phase = HTTP1HeadScanner.initialPhase(for: mode)
        position = 0
        headStart = 0
        lineStart = 0
        fieldCount = 0
        if !repairs.isEmpty { repairs = [] }
        needsUnfolding = false
    }

    /// Shifts offsets after the caller dropped `count` leading bytes (only ignored empty lines are ever dropped).
    mutating func dropLeading(_ count: Int) {
        position -= count
    }

    /// How many bytes of the current section have been scanned.
    package var scannedCount: Int { position }

    /// Whether bytes of an unfinished section have been seen (ignored empty lines do not count).
    var hasPartialSection: Bool {
        switch phase {
        case .leadingEmptyLine: return false
        case .statusLine, .lineStart: return position > 0
        case .leadingLineFeed, .method, .target, .version, .startLineTrailingWhitespace, .reason,
            .startLineLineFeed, .name, .valueLeadingWhitespace, .value, .valueLineFeed, .finalLineFeed:
            return true
        }
    }

    /// Scans `bytes` (the section starts at index 0) from where the last call stopped.
    /// - Parameters:
    ///   - bytes: The section's bytes received so far.
    ///   - streamOffset: Absolute stream offset of `bytes[0]`, for errors and repairs.
    ///   - configuration: Limits and leniency.
    /// - Throws: `HTTP1ParseError` at the first offending byte.
    mutating func scan(
        _ bytes: UnsafeBufferPointer<UInt8>,
        streamOffset: Int,
        configuration: HTTP1ParserConfiguration
    ) throws(HTTP1ParseError) -> Outcome {
        let table = CharacterClasses.table
        let count = bytes.count
        let leniency = mode == .trailers ? HTTP1Leniency() : configuration.leniency
        var index = position

        while true {
            let limit = currentLimit(configuration)
            let end = min(count, limit)
            if index >= end {
                position = index
                if end < count {
                    throw limitError(configuration, streamOffset: streamOffset)
                }
                switch phase {
                case .leadingEmptyLine:
                    return .incomplete(consumable: index)
                case .leadingLineFeed:
                    return .incomplete(consumable: index - 1)
                case .method, .target, .version, .startLineTrailingWhitespace, .statusLine, .reason,
                    .startLineLineFeed, .lineStart, .name, .valueLeadingWhitespace, .value, .valueLineFeed,
                    .finalLineFeed:
                    return .incomplete(consumable: 0)
                }
            }
            let byte = bytes[index]

            switch phase {
            case .leadingEmptyLine:
                // RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request-line.
                if byte == ASCII.cr {
                    phase = .leadingLineFeed
                    index += 1
                } else if byte == ASCII.lf {
                    guard leniency.contains(.bareLineFeed) else {
                        throw HTTP1ParseError(.bareLF, at: streamOffset + index)
                    }
                    noteRepair(.bareLineFeed, at: streamOffset + index)
                    index += 1
                } else {
                    if index > 0 {
                        // Hand the ignored lines back first, so the head's offsets start at 0.
                        position = index
                        return .incomplete(consumable: index)
                    }
                    headStart = index
                    phase = .method
                }

            case .leadingLineFeed:
                guard byte == ASCII.lf else { throw HTTP1ParseError(.bareCR, at: streamOffset + index - 1) }
                phase = .leadingEmptyLine
                index += 1

            case .method:
                while index < end && table[bytes[index]] & CharacterClasses.token != 0 { index &+= 1 }
                if index == end { continue }
                let stop = bytes[index]
                if index == headStart {
                    throw HTTP1ParseError(.invalidMethod, at: streamOffset + index)
                }
                if stop == ASCII.space || (leniency.contains(.startLineWhitespace) && isLooseWhitespace(stop)) {
                    if stop != ASCII.space { noteRepair(.startLineWhitespace, at: streamOffset + index) }
                    methodEnd = index
                    index += 1
                    targetStart = index
                    phase = .target
                } else if stop == ASCII.cr || stop == ASCII.lf || isLooseWhitespace(stop) {
                    throw HTTP1ParseError(.invalidRequestLine, at: streamOffset + index)
                } else {
                    throw HTTP1ParseError(.invalidMethod, at: streamOffset + index)
                }

            case .target:
                if index == targetStart && isLooseWhitespace(byte) {
                    // RFC 9112 §3: exactly one SP separates the parts; a run of whitespace is a repair, not a rule.
                    guard leniency.contains(.startLineWhitespace) else {
                        throw HTTP1ParseError(.invalidRequestLine, at: streamOffset + index)
                    }
                    noteRepair(.startLineWhitespace, at: streamOffset + index)
                    index += 1
                    targetStart = index
                    continue
                }
                while index < end && table[bytes[index]] & CharacterClasses.target != 0 { index &+= 1 }
                if index == end { continue }
                let stop = bytes[index]
                if stop == ASCII.space || (leniency.contains(.startLineWhitespace) && isLooseWhitespace(stop)) {
                    if stop != ASCII.space { noteRepair(.startLineWhitespace, at: streamOffset + index) }
                    targetEnd = index
                    index += 1
                    versionStart = index
                    phase = .version
                } else if stop == ASCII.cr || stop == ASCII.lf {
                    // No version: an HTTP/0.9 simple request, which HTTP/1.1 servers do not accept.
                    throw HTTP1ParseError(.invalidRequestLine, at: streamOffset + index)
                } else {
                    throw HTTP1ParseError(.invalidTarget, at: streamOffset + index)
                }

            case .version:
                let offsetInVersion = index - versionStart
                if offsetInVersion == 0 && index + 8 <= end && Self.isHTTP11Or10(bytes, at: index) {
                    // The usual case in one step; anything else goes byte by byte below, which finds the fault's
                    // offset.
                    version = HTTPVersion(major: 1, minor: bytes[index + 7] &- 0x30)
                    index += 8
                    continue
                }
                if offsetInVersion < 8 {
                    if offsetInVersion == 0 && isLooseWhitespace(byte) {
                        guard leniency.contains(.startLineWhitespace) else {
                            throw HTTP1ParseError(.invalidRequestLine, at: streamOffset + index)
                        }
                        noteRepair(.startLineWhitespace, at: streamOffset + index)
                        index += 1
                        versionStart = index
                        continue
                    }
                    try checkVersionByte(byte, offsetInVersion, streamOffset: streamOffset, at: index, start: versionStart)
                    index += 1
                } else if byte == ASCII.cr {
                    phase = .startLineLineFeed
                    index += 1
                } else if byte == ASCII.lf {
                    try acceptBareLineFeed(leniency, streamOffset: streamOffset, at: index)
                    index += 1
                    beginFields(at: index)
                } else if leniency.contains(.startLineWhitespace) && isLooseWhitespace(byte) {
                    noteRepair(.startLineWhitespace, at: streamOffset + index)
                    phase = .startLineTrailingWhitespace
                    index += 1
                } else {
                    throw HTTP1ParseError(.invalidVersion, at: streamOffset + index)
                }

            case .startLineTrailingWhitespace:
                if isLooseWhitespace(byte) {
                    index += 1
                } else if byte == ASCII.cr {
                    phase = .startLineLineFeed
                    index += 1
                } else if byte == ASCII.lf {
                    try acceptBareLineFeed(leniency, streamOffset: streamOffset, at: index)
                    index += 1
                    beginFields(at: index)
                } else {
                    throw HTTP1ParseError(.invalidVersion, at: streamOffset + index)
                }

            case .statusLine:
                // status-line = HTTP-version SP status-code SP [ reason-phrase ] (RFC 9112 §4), fixed positions.
                if index == headStart && index &+ 13 <= end, let code = Self.usualStatusLineStart(bytes, at: index) {
                    // The usual start, `HTTP/1.x NNN `, in one step; anything else goes byte by byte below, which
                    // finds the fault's offset.
                    version = HTTPVersion(major: 1, minor: bytes[index &+ 7] &- 0x30)
                    statusCode = code
                    index &+= 13
                    reasonStart = index
                    reasonEnd = index
                    phase = .reason
                    continue
                }
                let column = index - headStart
                if column < 8 {
                    try checkVersionByte(byte, column, streamOffset: streamOffset, at: index, start: headStart)
                } else if column == 8 {
                    guard byte == ASCII.space else {
                        throw HTTP1ParseError(.invalidStatusLine, at: streamOffset + index)
                    }
                } else if column < 12 {
                    guard ASCII.isDigit(byte) else {
                        throw HTTP1ParseError(.invalidStatusCode, at: streamOffset + index)
                    }
                    statusCode = (column == 9 ? 0 : statusCode * 10) + Int(byte - 0x30)
                    if column == 11 && statusCode < 100 {
                        throw HTTP1ParseError(.invalidStatusCode, at: streamOffset + headStart + 9)
                    }
                } else if byte == ASCII.space {
                    reasonStart = index + 1
                    reasonEnd = index + 1
                    phase = .reason
                } else if (byte == ASCII.cr || byte == ASCII.lf) && leniency.contains(.startLineWhitespace) {
                    noteRepair(.startLineWhitespace, at: streamOffset + index)
                    reasonStart = index
                    reasonEnd = index
                    phase = .reason
                    continue
                } else if ASCII.isDigit(byte) {
                    throw HTTP1ParseError(.invalidStatusCode, at: streamOffset + index)
                } else {
                    throw HTTP1ParseError(.invalidStatusLine, at: streamOffset + index)
                }
                index += 1

            case .reason:
                let allowed = CharacterClasses.fieldVChar | CharacterClasses.whitespace
                while index < end && table[bytes[index]] & allowed != 0 { index &+= 1 }
                if index == end { continue }
                let stop = bytes[index]
                reasonEnd = index
                if stop == ASCII.cr {
                    phase = .startLineLineFeed
                    index += 1
                } else if stop == ASCII.lf {
                    try acceptBareLineFeed(leniency, streamOffset: streamOffset, at: index)
                    index += 1
                    beginFields(at: index)
                } else {
                    throw HTTP1ParseError(.invalidReasonPhrase, at: streamOffset + index)
                }

            case .startLineLineFeed:
                guard byte == ASCII.lf else { throw HTTP1ParseError(.bareCR, at: streamOffset + index - 1) }
                index += 1
                beginFields(at: index)

            case .lineStart:
                // Fast path: walk complete, well-formed field lines without going back through the dispatcher,
                // which costs an unpredictable indirect jump per phase. Anything unusual (a partial line, an
                // error, obs-fold, a bare LF) leaves the line to the general state machine below, so a line is
                // scanned at most twice per call and trickled input never takes this path mid-line.
                var cursor = index
                while cursor < end && table[bytes[cursor]] & CharacterClasses.token != 0 {
                    var probe = cursor &+ 1
                    let raw = UnsafeRawPointer(bytes.baseAddress!)
                    // Eight bytes at a time, and into the word that ends the name as far as its first byte that is
                    // not a letter, digit or "-" (usually the colon), so the byte loop below sees one byte, not up to
                    // eight.
                    while probe &+ 8 <= end {
                        let others = HTTP1HeadScanner.nonAlphanumericOrDashLanes(
                            raw.loadUnaligned(fromByteOffset: probe, as: UInt64.self))
                        if others == 0 {
                            probe &+= 8
                            continue
                        }
                        probe &+= others.trailingZeroBitCount &>> 3
                        break
                    }
                    while probe < end && table[bytes[probe]] & CharacterClasses.token != 0 { probe &+= 1 }
                    guard probe < end, bytes[probe] == ASCII.colon else { break }
                    let colon = probe
                    probe &+= 1
                    while probe < end && (bytes[probe] == ASCII.space || bytes[probe] == ASCII.tab) { probe &+= 1 }
                    let (stop, lastVisible) = HTTP1HeadScanner.scanValue(
                        bytes, from: probe, end: end, lastVisible: probe, table: table)
                    guard stop &+ 1 < end, bytes[stop] == ASCII.cr, bytes[stop &+ 1] == ASCII.lf else { break }
                    lineStart = cursor
                    nameStart = cursor
                    nameEnd = colon
                    valueStart = probe
                    valueEnd = lastVisible
                    try recordField(configuration, streamOffset: streamOffset)
                    cursor = stop &+ 2
                }
                if cursor != index {
                    index = cursor
                    continue
                }
                lineStart = index
                if byte == ASCII.cr {
                    phase = .finalLineFeed
                    index += 1
                } else if table[byte] & CharacterClasses.token != 0 {
                    nameStart = index
                    phase = .name
                    index += 1
                } else if byte == ASCII.lf {
                    try acceptBareLineFeed(leniency, streamOffset: streamOffset, at: index)
                    position = index + 1
                    return .complete(end: index + 1)
                } else if byte == ASCII.space || byte == ASCII.tab {
                    if fieldCount == 0 {
                        // RFC 9112 §2.2: such a line could be mistaken for a field; refuse it.
                        throw HTTP1ParseError(.whitespaceBeforeFirstField, at: streamOffset + index)
                    }
                    guard leniency.contains(.obsoleteLineFolding) else {
                        throw HTTP1ParseError(.obsoleteLineFolding, at: streamOffset + index)
                    }
                    // RFC 9112 §5.2: replace each obs-fold with SP; reopen the previous field and extend it.
                    noteRepair(.obsoleteLineFolding, at: streamOffset + index)
                    needsUnfolding = true
                    fieldCount -= 1
                    let last = fieldSlots[fieldCount]
                    nameStart = last.nameStart
                    nameEnd = last.nameStart + last.nameLength
                    valueStart = last.valueStart
                    valueEnd = last.valueStart + last.valueLength
                    phase = valueEnd == valueStart ? .valueLeadingWhitespace : .value
                    index += 1
                } else {
                    throw HTTP1ParseError(.invalidFieldName, at: streamOffset + index)
                }

            case .name:
                while index < end && table[bytes[index]] & CharacterClasses.token != 0 { index &+= 1 }
                if index == end { continue }
                let stop = bytes[index]
                if stop == ASCII.colon {
                    nameEnd = index
                    index += 1
                    phase = .valueLeadingWhitespace
                } else if stop == ASCII.space || stop == ASCII.tab {
                    // RFC 9112 §5.1: MUST reject; proxies disagree on what such a name means.
                    throw HTTP1ParseError(.whitespaceBeforeColon, at: streamOffset + index)
                } else {
                    throw HTTP1ParseError(.invalidFieldName, at: streamOffset + index)
                }

            case .valueLeadingWhitespace:
                while index < end && (bytes[index] == ASCII.space || bytes[index] == ASCII.tab) { index += 1 }
                if index == end { continue }
                valueStart = index
                valueEnd = index
                phase = .value

            case .value:
                // Trailing OWS is excluded from the value (RFC 9112 §5.1) by tracking the last visible byte.
                let scanned = HTTP1HeadScanner.scanValue(
                    bytes, from: index, end: end, lastVisible: valueEnd, table: table)
                index = scanned.stop
                valueEnd = scanned.lastVisible
                if index == end { continue }
                let stop = bytes[index]
                if stop == ASCII.cr {
                    phase = .valueLineFeed
                    index += 1
                } else if stop == ASCII.lf {
                    try acceptBareLineFeed(leniency, streamOffset: streamOffset, at: index)
                    try recordField(configuration, streamOffset: streamOffset)
                    index += 1
                    phase = .lineStart
                } else {
                    // NUL, CTLs and DEL: RFC 9110 §5.5 allows only field-vchar, SP and HTAB.
                    throw HTTP1ParseError(.invalidFieldValue, at: streamOffset + index)
                }

            case .valueLineFeed:
                guard byte == ASCII.lf else { throw HTTP1ParseError(.bareCR, at: streamOffset + index - 1) }
                try recordField(configuration, streamOffset: streamOffset)
                index += 1
                phase = .lineStart

            case .finalLineFeed:
                guard byte == ASCII.lf else { throw HTTP1ParseError(.bareCR, at: streamOffset + index - 1) }
                position = index + 1
                return .complete(end: index + 1)
            }
        }
    }

    /// The index scanning may not reach in the current phase.
    @inline(__always)
    private func currentLimit(_ configuration: HTTP1ParserConfiguration) -> Int {
        switch phase {
        case .leadingEmptyLine, .leadingLineFeed:
            return Int.max
        case .method, .target, .version, .startLineTrailingWhitespace, .statusLine, .reason:
            // The CR may sit at headStart + maxStartLineLength; any content byte there makes the line too long.
            return headStart + min(configuration.maxStartLineLength + 1, configuration.maxHeaderSectionSize)
        case .startLineLineFeed, .lineStart, .name, .valueLeadingWhitespace, .value, .valueLineFeed, .finalLineFeed:
            return headStart + configuration.maxHeaderSectionSize
        }
    }

    private func limitError(_ configuration: HTTP1ParserConfiguration, streamOffset: Int) -> HTTP1ParseError {
        switch phase {
        case .method, .target, .version, .startLineTrailingWhitespace, .statusLine, .reason:
            if configuration.maxStartLineLength + 1 <= configuration.maxHeaderSectionSize {
                let kind: HTTP1ParseError.Kind = mode == .request ? .requestLineTooLong : .statusLineTooLong
                return HTTP1ParseError(kind, at: streamOffset + headStart + configuration.maxStartLineLength)
            }
        case .leadingEmptyLine, .leadingLineFeed, .startLineLineFeed, .lineStart, .name, .valueLeadingWhitespace,
            .value, .valueLineFeed, .finalLineFeed:
            break
        }
        let kind: HTTP1ParseError.Kind = mode == .trailers ? .trailerSectionTooLarge : .headerSectionTooLarge
        return HTTP1ParseError(kind, at: streamOffset + headStart + configuration.maxHeaderSectionSize)
    }

    /// Whether the eight bytes at `index` are `HTTP/1.1` or `HTTP/1.0`: one load and two compares.
    @inline(__always)
    private static func isHTTP11Or10(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        // The bytes as a little-endian word, compared with "HTTP/1.1" and "HTTP/1.0" read the same way.
        let word = UInt64(
            littleEndian: UnsafeRawPointer(bytes.baseAddress!).loadUnaligned(fromByteOffset: index, as: UInt64.self))
        return word == 0x312E_312F_5054_5448 || word == 0x302E_312F_5054_5448
    }

    /// The status code when the 13 bytes at `index` are `HTTP/1.1 NNN ` or `HTTP/1.0 NNN ` with a code of 100 to 999;
    /// nil otherwise (the byte-by-byte path then says what is wrong, and where).
    @inline(__always)
    private static func usualStatusLineStart(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        guard isHTTP11Or10(bytes, at: index), bytes[index &+ 8] == ASCII.space, bytes[index &+ 12] == ASCII.space
        else { return nil }
        let hundreds = bytes[index &+ 9] &- 0x30
        let tens = bytes[index &+ 10] &- 0x30
        let ones = bytes[index &+ 11] &- 0x30
        guard hundreds >= 1 && hundreds <= 9 && tens <= 9 && ones <= 9 else { return nil }
        return Int(hundreds) &* 100 &+ Int(tens) &* 10 &+ Int(ones)
    }

    /// Checks byte `column` (0..<8) of `HTTP/x.y`; on the last digit, checks the version is 1.0 or 1.1.
    private mutating func checkVersionByte(
        _ byte: UInt8,
        _ column: Int,
        streamOffset: Int,
        at index: Int,
        start: Int
    ) throws(HTTP1ParseError) {
        let valid: Bool
        switch column {
        case 0: valid = byte == UInt8(ascii: "H")
        case 1, 2: valid = byte == UInt8(ascii: "T")
        case 3: valid = byte == UInt8(ascii: "P")
        case 4: valid = byte == ASCII.slash
        case 5:
            valid = ASCII.isDigit(byte)
            version.major = byte &- 0x30
        case 6: valid = byte == ASCII.dot
        default:
            valid = ASCII.isDigit(byte)
            version.minor = byte &- 0x30
        }
        guard valid else { throw HTTP1ParseError(.invalidVersion, at: streamOffset + index) }
        if column == 7 && (version.major != 1 || version.minor > 1) {
            throw HTTP1ParseError(.unsupportedVersion, at: streamOffset + start)
        }
    }

    /// Scans field-value bytes from `start` until a byte that is not field-vchar, SP or HTAB.
    /// - Returns: The index of that byte (or `end`), and one past the last visible byte seen.
    @inline(__always)
    static func scanValue(
        _ bytes: UnsafeBufferPointer<UInt8>,
        from start: Int,
        end: Int,
        lastVisible initialLastVisible: Int,
        table: CharacterClasses.Table
    ) -> (stop: Int, lastVisible: Int) {
        var index = start
        var lastVisible = initialLastVisible
        let raw = UnsafeRawPointer(bytes.baseAddress!)
        valueLoop: while index < end {
            if index &+ 8 <= end {
                // Eight bytes at a time while none is a control byte or DEL and the last is visible (so it ends the
                // value so far): values are mostly visible text and single spaces.
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let stops = controlOrDeleteLanes(word)
                if stops == 0 && word >> 56 != UInt64(ASCII.space) {
                    index &+= 8
                    lastVisible = index
                    continue
                }
                // The bytes before the word's first control byte (usually the CR) are visible or SP; when the last of
                // them is visible the value so far ends there, and the control byte is left to the byte loop (HTAB
                // goes on, CR stops). Without this a value's last word went byte by byte through the table.
                let clean = stops.trailingZeroBitCount &>> 3
                if clean > 0 && clean < 8 && bytes[index &+ clean &- 1] != ASCII.space {
                    index &+= clean
                    lastVisible = index
                    continue
                }
            }
            let stop = min(index &+ 8, end)
            while index < stop {
                let bits = table[bytes[index]]
                if bits & CharacterClasses.fieldVChar != 0 {
                    index &+= 1
                    lastVisible = index
                } else if bits & CharacterClasses.whitespace != 0 {
                    index &+= 1
                } else {
                    break valueLoop
                }
            }
        }
        return (index, lastVisible)
    }

    /// Whether all eight bytes of `word` are ASCII letters, digits or "-", the usual field-name bytes (all `tchar`).
    @inline(__always)
    package static func isAlphanumericOrDash(_ word: UInt64) -> Bool {
        nonAlphanumericOrDashLanes(word) == 0
    }

    /// The high bit of every lane (byte, little-endian) of `word` that is not an ASCII letter, digit or "-", exact up
    /// to and including the lowest such lane (lanes above it may be marked wrongly): `trailingZeroBitCount / 8` is the
    /// offset of the first byte that is not one of them, and 0 means all eight are.
    ///
    /// Per-byte range checks: for x < 0x80, x + (0x80 - lo) sets the high bit iff x >= lo, and x + (0x7F - hi) sets it
    /// iff x > hi, with no carry out of the lane. Exact up to the lowest marked lane because only a lane of 0x80 or more
    /// carries, upward, and such a lane is marked itself.
    @inline(__always)
    package static func nonAlphanumericOrDashLanes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let lower = word | (ones &* 0x20)
        let letters = (lower &+ ones &* (0x80 - 0x61)) & ~(lower &+ ones &* (0x7F - 0x7A))
        let digits = (word &+ ones &* (0x80 - 0x30)) & ~(word &+ ones &* (0x7F - 0x39))
        let dash = word ^ (ones &* 0x2D)
        let dashes = ~(((dash & ~highBits) &+ ~highBits) | dash)
        return (~(letters | digits | dashes) | word) & highBits
    }

    /// Whether any of the eight bytes in `word` is below 0x20 (a control byte, HTAB included) or is DEL (0x7F).
    @inline(__always)
    package static func containsControlOrDelete(_ word: UInt64) -> Bool {
        controlOrDeleteLanes(word) != 0
    }

    /// The high bit of every lane of `word` whose byte is below 0x20 or is DEL, exact up to and including the lowest
    /// such lane: `trailingZeroBitCount / 8` is the offset of the first control byte.
    ///
    /// The classic SWAR "has byte less than n" test: a byte below n borrows into its high bit, which `~word` keeps
    /// only for bytes below 0x80. A borrow runs only upward, so lanes above a marked one may be marked wrongly, never
    /// lanes below it.
    @inline(__always)
    package static func controlOrDeleteLanes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let below = (word &- ones &* 0x20) & ~word & highBits
        let delete = word ^ (ones &* 0x7F)
        let isDelete = (delete &- ones) & ~delete & highBits
        return below | isDelete
    }

    /// SP, HTAB, VT and FF: the separators RFC 9112 §3 lets a lenient recipient accept in a request line.
    @inline(__always)
    private func isLooseWhitespace(_ byte: UInt8) -> Bool {
        byte == ASCII.space || byte == ASCII.tab || byte == ASCII.verticalTab || byte == ASCII.formFeed
    }

    @inline(__always)
    private mutating func beginFields(at index: Int) {
        lineStart = index
        phase = .lineStart
    }

    private mutating func acceptBareLineFeed(
        _ leniency: HTTP1Leniency,
        streamOffset: Int,
        at index: Int
    ) throws(HTTP1ParseError) {
        guard leniency.contains(.bareLineFeed) else { throw HTTP1ParseError(.bareLF, at: streamOffset + index) }
        noteRepair(.bareLineFeed, at: streamOffset + index)
    }

    @inline(__always)
    private mutating func recordField(
        _ configuration: HTTP1ParserConfiguration,
        streamOffset: Int
    ) throws(HTTP1ParseError) {
        if fieldCount >= configuration.maxHeaderCount {
            throw HTTP1ParseError(.tooManyHeaders, at: streamOffset + lineStart)
        }
        if fieldCount == fieldSlots.count { growFieldSlots() }
        fieldSlots[fieldCount] = FieldSpan(
            nameStart: nameStart, nameLength: nameEnd - nameStart, valueStart: valueStart,
            valueLength: valueEnd - valueStart)
        fieldCount += 1
    }

    /// Doubles the field slots (16 to start with: one allocation sized for a typical head; idle connections give the
    /// storage back, so each head after idling allocates it anew).
    @inline(never)  // Rare: off the per-field path.
    private mutating func growFieldSlots() {
        let empty = FieldSpan(nameStart: 0, nameLength: 0, valueStart: 0, valueLength: 0)
        fieldSlots.append(contentsOf: repeatElement(empty, count: Swift.max(Self.initialFieldCapacity, fieldSlots.count)))
    }

    /// Records a repair once per kind per head, so a lenient parse of a hostile head stays bounded.
    mutating func noteRepair(_ kind: HTTP1Leniency, at offset: Int) {
        if !repairs.contains(where: { $0.kind == kind }) {
            repairs.append(HTTP1Repair(kind: kind, offset: offset))
        }
    }
}
