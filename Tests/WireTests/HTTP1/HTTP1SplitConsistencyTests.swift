import Testing
import WireTestSupport

import Wire

/// Property: however a stream is split, the parser reports the same events and the same error at the same offset.
/// Inputs are deterministic mutations of valid messages, so the whole-buffer fast paths and the resumable slow
/// paths are both exercised on malformed bytes.
struct HTTP1SplitConsistencyTests {
    static let seeds: [(String, HTTP1Parser.Kind)] = [
        ("GET /a?b=c HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n", .request),
        ("POST /u HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;x=\"y\"\r\nhello\r\n0\r\nT: 1\r\n\r\n", .request),
        ("PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.0\r\n\r\n", .request),
        ("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX: y\r\n\r\nhiHTTP/1.1 204 No Content\r\n\r\n", .response),
        ("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n", .response),
        // Status lines the one-step start takes (`HTTP/1.x NNN `) and their near misses, whole or cut anywhere.
        ("HTTP/1.0 404 Not Found\r\nContent-Length: 1\r\n\r\nx", .response),
        ("HTTP/1.1 599 \r\nContent-Length: 0\r\n\r\n", .response),
    ]

    static let interesting: [UInt8] = Array(" \t\r\n:;,=\"\\0aZ%/\u{7F}".utf8) + [0x00, 0x0B, 0x80, 0xFF]

    @Test(arguments: [HTTP1ParserConfiguration.strict, .lenient])
    func mutatedInputsParseTheSameAtAnySplit(configuration: HTTP1ParserConfiguration) {
        var random = SplitMix64(seed: 0x5EED)
        for round in 0..<1500 {
            let (text, kind) = HTTP1SplitConsistencyTests.seeds[round % HTTP1SplitConsistencyTests.seeds.count]
            var bytes = Array(text.utf8)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                let replacement = HTTP1SplitConsistencyTests.interesting.randomElement(using: &random)!
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[position] = replacement
                case 1: bytes.insert(replacement, at: position)
                default: if bytes.count > 1 { bytes.remove(at: position) }
                }
            }
            let whole = HTTP1TestDriver.run(bytes, kind: kind, configuration: configuration)
            let cut = Int.random(in: 0...bytes.count, using: &random)
            let split = HTTP1TestDriver.run(bytes, kind: kind, configuration: configuration, splits: [cut])
            #expect(split == whole, "\(HTTP1TestDriver.escape(bytes)) split at \(cut)")
            if round % 10 == 0 {
                let trickled = HTTP1TestDriver.run(
                    bytes, kind: kind, configuration: configuration, splits: Array(0..<bytes.count))
                #expect(trickled == whole, "\(HTTP1TestDriver.escape(bytes)) one byte at a time")
            }
        }
    }
}
