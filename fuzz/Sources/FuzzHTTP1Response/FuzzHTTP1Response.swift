import FuzzSupport
import Wire

/// libFuzzer entry: the input (after four option bytes, see `FuzzCase`) is a stream of responses to requests whose
/// methods come from byte 1 (GET, HEAD, CONNECT, POST). Checks split consistency and framing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP1Response(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let raw = UnsafeBufferPointer(start: data, count: data == nil ? 0 : size)
    guard let fuzzCase = FuzzCase(raw, kind: .response) else { return 0 }
    let original = Array(raw)
    let log = checkSplitConsistency(fuzzCase.payload, fuzzCase, original: original)
    checkFraming(log, fuzzCase, original: original)
    return 0
}

/// The executable's entry (see `runLibFuzzer`).
@_cdecl("FuzzHTTP1Response_main")
public func fuzzHTTP1ResponseMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc: argc, argv: argv) { data, size in fuzzHTTP1Response(data, size) }
}
