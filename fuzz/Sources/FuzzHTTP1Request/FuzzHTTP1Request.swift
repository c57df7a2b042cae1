import FuzzSupport
import Wire

/// libFuzzer entry: the input (after four option bytes, see `FuzzCase`) is a stream of requests.
/// Checks split consistency and that every accepted head is framed unambiguously and as its fields say.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP1Request(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let raw = UnsafeBufferPointer(start: data, count: data == nil ? 0 : size)
    guard let fuzzCase = FuzzCase(raw, kind: .request) else { return 0 }
    let original = Array(raw)
    let log = checkSplitConsistency(fuzzCase.payload, fuzzCase, original: original)
    checkFraming(log, fuzzCase, original: original)
    return 0
}

/// The executable's entry (see `runLibFuzzer`).
@_cdecl("FuzzHTTP1Request_main")
public func fuzzHTTP1RequestMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc: argc, argv: argv) { data, size in fuzzHTTP1Request(data, size) }
}
