import FuzzSupport
@testable import Wire

/// libFuzzer entry: the input is one routing netlink datagram, as a peer on the socket could send it. The parser
/// must answer with messages or a `RouteNetlinkParseError` whose offset lies inside the datagram, never trap; and a
/// datagram that parsed still parses, to the same messages, with a valid message appended.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRouteNetlink(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let datagram = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    // The parser throws only RouteNetlinkParseError (typed throws): there is no other error to handle.
    do throws(RouteNetlinkParseError) {
        let messages = try RouteNetlinkParser.messages(in: datagram)
        // Netlink pads every message to 4 bytes; a done message appended after the padding must be read as one more.
        var extended = datagram
        while extended.count % 4 != 0 { extended.append(0) }
        extended += RouteNetlinkRequest.dump(.links, sequence: 9).prefix(16).enumerated().map { index, byte in
            index == 0 ? 16 : index == 4 ? 3 : byte  // nlmsg_len 16, type NLMSG_DONE
        }
        let again = try RouteNetlinkParser.messages(in: extended)
        precondition(Array(again.dropLast()) == messages && again.last?.payload == .done, "appending a message changed the parse")
    } catch {
        precondition(error.offset >= 0 && error.offset <= datagram.count, "error offset \(error.offset) outside \(datagram.count) bytes")
    }
    return 0
}

/// The executable's entry (see `runLibFuzzer`).
@_cdecl("FuzzRouteNetlink_main")
public func fuzzRouteNetlinkMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc: argc, argv: argv) { data, size in fuzzRouteNetlink(data, size) }
}
