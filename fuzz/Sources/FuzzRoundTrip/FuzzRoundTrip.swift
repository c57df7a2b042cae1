import FuzzSupport
import Wire

/// libFuzzer entry, two directions chosen by bit 5 of byte 0 (bit 6: chunked, bit 0: HTTP/1.0, serializer first):
/// - parser first (bit clear): every message accepted from the payload (requests, or responses when bit 4 is set)
///   reserializes to bytes that parse to the same messages;
/// - serializer first (bit set): a head built from NUL-separated payload fields (method or status, target or reason,
///   then name/value pairs, then the body) that the serializer accepts is read back unchanged.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRoundTrip(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let raw = UnsafeBufferPointer(start: data, count: data == nil ? 0 : size)
    guard let fuzzCase = FuzzCase(raw, kind: .request, kindFromFlags: true) else { return 0 }
    let original = Array(raw)
    if fuzzCase.flags.contains(.alternate2) {
        checkSerializerOutput(fuzzCase, original: original)
    } else {
        let log = runParser(fuzzCase.payload, fuzzCase, splits: [], original: original)
        let messages = checkFraming(log, fuzzCase, original: original)
        checkRoundTrip(messages, fuzzCase, original: original)
    }
    return 0
}

/// The executable's entry (see `runLibFuzzer`).
@_cdecl("FuzzRoundTrip_main")
public func fuzzRoundTripMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc: argc, argv: argv) { data, size in fuzzRoundTrip(data, size) }
}
