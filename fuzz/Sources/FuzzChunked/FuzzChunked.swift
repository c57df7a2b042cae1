import FuzzSupport
import Wire

/// libFuzzer entry: the payload is a chunked body (then whatever follows it on the connection) after a fixed head,
/// a request's or, with bit 4 of byte 0, a response's. Checks split consistency and compares the decoded body with
/// `ReferenceChunked`, an independent reading of the grammar: Wire must accept exactly the chunk framing the
/// reference accepts, and decode the same bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChunked(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let raw = UnsafeBufferPointer(start: data, count: data == nil ? 0 : size)
    guard let fuzzCase = FuzzCase(raw, kind: .request, kindFromFlags: true) else { return 0 }
    let original = Array(raw)
    let head: [UInt8] = fuzzCase.kind == .request
        ? Array("POST /c HTTP/1.1\r\nHost: f\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        : Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
    var chunkedCase = fuzzCase
    chunkedCase.methods = []
    chunkedCase.splits = fuzzCase.splits.map { $0 + head.count }
    let log = checkSplitConsistency(head + fuzzCase.payload, chunkedCase, original: original)
    checkFraming(log, chunkedCase, original: original)

    // The first message's outcome, as Wire saw it.
    var body: [UInt8] = []
    var ended = false
    var errorOffset: Int?
    for entry in log.entries.dropFirst() {
        switch entry {
        case .body(let bytes): body = bytes
        case .end: ended = true
        case .error(let error): errorOffset = error.offset - head.count
        default: break
        }
        if ended || errorOffset != nil { break }
    }
    let reference = ReferenceChunked.decode(
        fuzzCase.payload, maxExtensionLength: chunkedCase.configuration.maxChunkExtensionLength,
        maxBodySize: chunkedCase.configuration.maxBodySize)
    switch reference {
    case .decoded(let expected, let end):
        // Wire may still refuse the trailer section after `end`, but not the chunks before it.
        if let errorOffset, errorOffset < end {
            propertyFailed("Wire refused at \(errorOffset) chunks the reference decodes up to \(end)\n\(log)", input: original)
        }
        if ended || errorOffset != nil, body != expected {
            propertyFailed("Wire decoded \(escapeBytes(body)), reference \(escapeBytes(expected))\n\(log)", input: original)
        }
    case .invalid(let at):
        if ended { propertyFailed("Wire accepted chunks the reference refuses at \(at)\n\(log)", input: original) }
    case .incomplete:
        if ended { propertyFailed("Wire ended a body the reference finds incomplete\n\(log)", input: original) }
    }
    return 0
}

/// The executable's entry (see `runLibFuzzer`).
@_cdecl("FuzzChunked_main")
public func fuzzChunkedMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc: argc, argv: argv) { data, size in fuzzChunked(data, size) }
}
