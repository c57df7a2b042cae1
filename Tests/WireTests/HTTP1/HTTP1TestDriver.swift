import Testing

import Wire

/// Feeds bytes to an `HTTP1Parser` the way a connection would and records a readable event log.
///
/// Body events are merged so that logs do not depend on how the input was split. Entries:
/// `head ...`, `body ...`, `end`, `end trailers | k: v`, `upgrade-requested`, `upgraded rest=...`,
/// `error kind@offset`.
struct HTTP1TestDriver {
    var parser: HTTP1Parser
    var buffer: [UInt8] = []
    var log: [String] = []
    var pendingBody: [UInt8] = []
    var acceptsUpgrades: Bool

    init(
        kind: HTTP1Parser.Kind,
        configuration: HTTP1ParserConfiguration = .strict,
        methods: [HTTPMethod] = [],
        acceptsUpgrades: Bool = false
    ) {
        parser = HTTP1Parser(kind: kind, configuration: configuration)
        for method in methods { parser.expectResponse(to: method) }
        self.acceptsUpgrades = acceptsUpgrades
    }

    /// Runs `input` split before each index in `splits`, then signals end of stream if `finish`.
    static func run(
        _ input: [UInt8],
        kind: HTTP1Parser.Kind,
        configuration: HTTP1ParserConfiguration = .strict,
        methods: [HTTPMethod] = [],
        acceptsUpgrades: Bool = false,
        splits: [Int] = [],
        finish: Bool = true
    ) -> [String] {
        var driver = HTTP1TestDriver(
            kind: kind, configuration: configuration, methods: methods, acceptsUpgrades: acceptsUpgrades)
        var start = 0
        do {
            for split in splits + [input.count] where split >= start {
                try driver.feed(Array(input[start..<split]))
                start = split
            }
            if finish {
                if let event = try driver.parser.finish() { driver.record(event) }
            }
        } catch {
            driver.flushBody()
            driver.log.append("error \(error)")
        }
        driver.flushBody()
        if driver.parser.isUpgraded {
            driver.log.append("rest=" + escape(driver.buffer))
        }
        return driver.log
    }

    mutating func feed(_ bytes: [UInt8]) throws(HTTP1ParseError) {
        buffer.append(contentsOf: bytes)
        while true {
            let input = buffer  // shares storage; avoids overlapping access to self
            let step = try parser.parse(input.span)
            #expect(step.consumed >= 0 && step.consumed <= buffer.count)
            if let event = step.event {
                if case .body(let range) = event {
                    pendingBody.append(contentsOf: buffer[range])
                } else {
                    record(event)
                }
            }
            buffer.removeFirst(step.consumed)
            if step.event == nil {
                if parser.isAwaitingUpgradeDecision {
                    flushBody()
                    log.append("upgrade-requested")
                    if acceptsUpgrades { parser.acceptUpgrade() } else { parser.declineUpgrade() }
                    continue
                }
                return
            }
        }
    }

    mutating func record(_ event: HTTP1ParserEvent) {
        flushBody()
        switch event {
        case .requestHead(let head):
            var line = "head \(head.method) \(head.target) \(head.version)"
            for field in head.headers { line += " | \(field.name): \(field.value)" }
            if !head.repairs.isEmpty { line += " repairs=\(head.repairs)" }
            log.append(line)
        case .responseHead(let head):
            var line = "head \(head.version) \(head.status.code) \(head.reasonPhrase)"
            for field in head.headers { line += " | \(field.name): \(field.value)" }
            if !head.repairs.isEmpty { line += " repairs=\(head.repairs)" }
            log.append(line)
        case .body:
            break
        case .end(let trailers):
            var line = "end"
            if let trailers {
                line += " trailers"
                for field in trailers { line += " | \(field.name): \(field.value)" }
            }
            log.append(line)
        case .upgraded:
            log.append("upgraded")
        }
    }

    mutating func flushBody() {
        if !pendingBody.isEmpty {
            log.append("body " + HTTP1TestDriver.escape(pendingBody))
            pendingBody = []
        }
    }

    static func escape(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes {
            switch byte {
            case 0x0D: text += "\\r"
            case 0x0A: text += "\\n"
            case 0x09: text += "\\t"
            case 0x20...0x7E: text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16)
                text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return text
    }

    /// Runs `input` whole, split at every byte boundary, and one byte at a time; expects identical logs and
    /// returns the whole-input log.
    @discardableResult
    static func runEverySplit(
        _ text: String,
        kind: HTTP1Parser.Kind,
        configuration: HTTP1ParserConfiguration = .strict,
        methods: [HTTPMethod] = [],
        acceptsUpgrades: Bool = false,
        finish: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> [String] {
        let input = Array(text.utf8)
        let whole = run(
            input, kind: kind, configuration: configuration, methods: methods, acceptsUpgrades: acceptsUpgrades,
            finish: finish)
        for split in 1..<max(1, input.count) {
            let log = run(
                input, kind: kind, configuration: configuration, methods: methods,
                acceptsUpgrades: acceptsUpgrades, splits: [split], finish: finish)
            #expect(log == whole, "split at \(split)", sourceLocation: sourceLocation)
            if log != whole { break }
        }
        let trickled = run(
            input, kind: kind, configuration: configuration, methods: methods, acceptsUpgrades: acceptsUpgrades,
            splits: Array(0..<input.count), finish: finish)
        #expect(trickled == whole, "one byte at a time", sourceLocation: sourceLocation)
        return whole
    }

    /// Removes the `«` marker from `text`, returning the bytes and the marker's byte offset.
    static func marked(_ text: String) -> (bytes: [UInt8], offset: Int) {
        let marker = Array("«".utf8)
        var bytes = Array(text.utf8)
        var offset = -1
        for index in 0...(bytes.count - marker.count) where Array(bytes[index..<index + marker.count]) == marker {
            offset = index
            break
        }
        precondition(offset >= 0, "no « marker in test input")
        bytes.removeSubrange(offset..<offset + marker.count)
        return (bytes, offset)
    }
}
