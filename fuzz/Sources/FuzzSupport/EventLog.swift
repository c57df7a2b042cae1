import Wire

/// One thing the parser reported, with body bytes merged so logs do not depend on how input was split.
public enum LogEntry: Hashable, Sendable, CustomStringConvertible {
    /// A request or response head.
    case head(HTTP1ParserEvent)
    /// Body bytes (consecutive body events merged).
    case body([UInt8])
    /// End of message; `atEOF` when `finish()` produced it (a close-delimited body).
    case end(trailers: HTTPHeaders?, atEOF: Bool)
    /// A request asked to switch protocols; the driver answered from the case's flags.
    case upgradeRequested
    /// The parser switched protocols.
    case upgraded
    /// The parser refused the input.
    case error(HTTP1ParseError)

    public var description: String {
        switch self {
        case .head(let event): return "head \(event)"
        case .body(let bytes): return "body \(escapeBytes(bytes))"
        case .end(let trailers, let atEOF): return "end trailers=\(String(describing: trailers)) eof=\(atEOF)"
        case .upgradeRequested: return "upgrade-requested"
        case .upgraded: return "upgraded"
        case .error(let error): return "error \(error)"
        }
    }
}

/// The complete record of one parse: events, plus the bytes left after a protocol switch.
public struct EventLog: Hashable, Sendable, CustomStringConvertible {
    public var entries: [LogEntry] = []
    /// Bytes after `.upgraded`, which the parser no longer reads.
    public var rest: [UInt8] = []

    public var description: String {
        entries.map(\.description).joined(separator: "\n") + (rest.isEmpty ? "" : "\nrest \(escapeBytes(rest))")
    }

    mutating func append(_ entry: LogEntry) {
        if case .body(let more) = entry, case .body(let bytes)? = entries.last {
            entries[entries.count - 1] = .body(bytes + more)
        } else {
            entries.append(entry)
        }
    }
}

/// Feeds `input` to a fresh parser for `fuzzCase`, in pieces cut before each index of `splits`, then signals end of
/// stream; checks the pull contract on every step and returns the log.
public func runParser(_ input: [UInt8], _ fuzzCase: FuzzCase, splits: [Int], original: [UInt8]) -> EventLog {
    var parser = fuzzCase.makeParser()
    var log = EventLog()
    var buffer: [UInt8] = []
    var start = 0
    var upgraded = false

    func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { propertyFailed(message(), input: original) }
    }

    /// Parses what is buffered until the parser needs more; returns false once it failed.
    func drain() -> Bool {
        var idleEvents = 0
        while true {
            if upgraded {
                log.rest.append(contentsOf: buffer[start...])
                start = buffer.count
                return true
            }
            let available = buffer.count - start
            let step: HTTP1ParseStep
            do {
                step = try parser.parse(buffer.span.extracting(start...))
            } catch {
                log.append(.error(error))
                // A failed parser must keep failing with the same error.
                let again = Result { () throws(HTTP1ParseError) in
                    try parser.parse(buffer.span.extracting(start...))
                }
                check(again == .failure(error), "parse after \(error) gave \(again)")
                return false
            }
            check(step.consumed >= 0 && step.consumed <= available, "consumed \(step.consumed) of \(available)")
            switch step.event {
            case .body(let range):
                check(!range.isEmpty && range.lowerBound >= 0 && range.upperBound <= step.consumed,
                      "body range \(range) with consumed \(step.consumed)")
                log.append(.body(Array(buffer[start + range.lowerBound..<start + range.upperBound])))
            case .upgraded:
                upgraded = true
                log.append(.upgraded)
            case .end(let trailers):
                log.append(.end(trailers: trailers, atEOF: false))
            case .requestHead, .responseHead:
                log.append(.head(step.event!))
            case nil:
                break
            }
            start += step.consumed
            if step.event == nil {
                if parser.isAwaitingUpgradeDecision {
                    log.append(.upgradeRequested)
                    if fuzzCase.flags.contains(.acceptsUpgrades) {
                        parser.acceptUpgrade()
                    } else {
                        parser.declineUpgrade()
                    }
                    continue
                }
                return true
            }
            // An event without progress is fine (`.end` of a fixed body, `.upgraded`), but never repeatedly.
            idleEvents = step.consumed == 0 ? idleEvents + 1 : 0
            check(idleEvents < 4, "events without progress: \(log)")
        }
    }

    var cut = 0
    for split in splits + [input.count] where split >= cut {
        buffer.append(contentsOf: input[cut..<split])
        cut = split
        guard drain() else { return log }
        // Keep the buffer from growing with consumed bytes.
        if start > 4096 {
            buffer.removeFirst(start)
            start = 0
        }
    }
    if upgraded { return log }
    do {
        if let event = try parser.finish() {
            guard case .end(let trailers) = event else {
                propertyFailed("finish() returned \(event)", input: original)
            }
            log.append(.end(trailers: trailers, atEOF: true))
        }
    } catch {
        log.append(.error(error))
        let again = Result { () throws(HTTP1ParseError) in try parser.finish() }
        check(again.map { _ in 0 } == .failure(error), "finish after \(error) gave \(again)")
    }
    return log
}

/// Property: the input parsed whole, split at the case's two points, and (when short) one byte at a time gives
/// identical logs. Returns the whole-input log.
@discardableResult
public func checkSplitConsistency(_ input: [UInt8], _ fuzzCase: FuzzCase, original: [UInt8]) -> EventLog {
    let whole = runParser(input, fuzzCase, splits: [], original: original)
    let splits = fuzzCase.splits.map { min($0, input.count) }
    let split = runParser(input, fuzzCase, splits: splits, original: original)
    if split != whole {
        propertyFailed("split at \(splits) differs:\n--- whole\n\(whole)\n--- split\n\(split)", input: original)
    }
    if input.count <= 96 {
        let trickled = runParser(input, fuzzCase, splits: Array(0..<input.count), original: original)
        if trickled != whole {
            propertyFailed("byte-at-a-time differs:\n--- whole\n\(whole)\n--- trickled\n\(trickled)", input: original)
        }
    }
    return whole
}
