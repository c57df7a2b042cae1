import FuzzSupport
@testable import Wire

/// libFuzzer entry: byte 0 picks the handshake (bits 0–1: SOCKS 4 to an address, SOCKS 4a, SOCKS 5 to a name,
/// SOCKS 5 to an IPv6 address; bit 2: credentials), byte 1 the size of the reads; the rest is everything the proxy
/// sends. The handshake runs twice, fed one byte per read and in reads of that size. Neither may trap, and:
/// - the client sends the greeting first, the RFC 1929 message only after the proxy chose method 2, the request last;
/// - every offset in an error lies within the bytes fed;
/// - both runs end alike, unless the larger reads carried bytes past a reply the proxy had to wait after
///   (`unexpectedBytes`): fragmentation changes nothing else;
/// - on success the remainder is exactly the bytes after the reply, and a closed stream fails at the offset of the
///   bytes received.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSOCKS(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    guard input.count >= 2 else { return 0 }
    let replies = Array(input[2...])
    let credentials = input[0] & 4 != 0 ? ProxyCredentials(user: "user", password: "secret") : nil
    let piece = Int(input[1] % 16) + 1
    func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { propertyFailed(message(), input: input) }
    }

    struct Outcome {
        var sent: [[UInt8]] = []
        var end: SOCKSHandshakeAction = .awaitReply
        var fed = 0
    }

    func run(piece: Int) -> Outcome {
        var outcome = Outcome()
        var machine: Machine
        let v4 = try! SocketAddress(ipAddress: "192.0.2.1", port: 443)
        let v6 = try! SocketAddress(ipAddress: "2001:db8::1", port: 443)
        do throws(SOCKSError) {
            switch input[0] & 3 {
            case 0: machine = .four(try SOCKS4Handshake(target: .address(v4), userID: credentials?.user ?? ""))
            case 1: machine = .four(try SOCKS4Handshake(target: .name("example.com", port: 443)))
            case 2: machine = .five(try SOCKS5Handshake(target: .name("example.com", port: 443), credentials: credentials))
            default: machine = .five(try SOCKS5Handshake(target: .address(v6), credentials: credentials))
            }
        } catch {
            propertyFailed("a valid request was refused: \(error)", input: input)
        }
        var action = machine.start()
        while true {
            if case .send(let bytes) = action {
                outcome.sent.append(bytes)
            } else if action != .awaitReply {
                break
            }
            guard outcome.fed < replies.count else {
                action = machine.endOfStream()
                break
            }
            let chunk = replies[outcome.fed..<min(replies.count, outcome.fed + piece)]
            outcome.fed += chunk.count
            action = machine.receive(chunk)
        }
        outcome.end = action
        return outcome
    }

    let single = run(piece: 1)
    let chunked = run(piece: piece)
    for outcome in [single, chunked] {
        switch outcome.end {
        case .failed(.malformedReply(_, let offset)), .failed(.closedDuringHandshake(let offset)):
            check(offset >= 0 && offset <= outcome.fed, "offset \(offset) beyond \(outcome.fed) bytes fed")
        case .established(_, let remainder):
            check(Array(replies[(outcome.fed - remainder.count)..<outcome.fed]) == remainder, "remainder \(remainder)")
        case .failed, .awaitReply:
            break
        case .send:
            propertyFailed("ended on a send", input: input)
        }
        // The messages, in order: greeting, then authentication only after method 2, then the request.
        if input[0] & 3 >= 2 {
            check(outcome.sent.first == (credentials == nil ? [5, 1, 0] : [5, 2, 0, 2]), "greeting \(outcome.sent)")
            for (index, message) in outcome.sent.enumerated().dropFirst() {
                let isAuthentication = message.first == 1
                check(!isAuthentication || (index == 1 && credentials != nil), "authentication sent as message \(index)")
                check(isAuthentication || index == outcome.sent.count - 1, "request not last")
            }
        } else {
            check(outcome.sent.count == 1 && outcome.sent[0].first == 4, "SOCKS 4 sends one request")
        }
    }
    if case .failed(.malformedReply(.unexpectedBytes, _)) = chunked.end {
        // A read carried bytes past a reply the proxy had to wait after: the one-byte run went on.
    } else {
        check(chunked.sent == single.sent, "fragmentation changed what was sent")
        switch (single.end, chunked.end) {
        case (.established(let a, _), .established(let b, _)):
            check(a == b, "bound \(a) vs \(b)")
        default:
            check(single.end == chunked.end, "fragmentation changed the end: \(single.end) vs \(chunked.end)")
        }
    }
    return 0
}

/// One of the two machines, behind one interface for the driver.
private enum Machine {
    case four(SOCKS4Handshake)
    case five(SOCKS5Handshake)

    mutating func start() -> SOCKSHandshakeAction {
        switch self {
        case .four(var machine):
            defer { self = .four(machine) }
            return machine.start()
        case .five(var machine):
            defer { self = .five(machine) }
            return machine.start()
        }
    }

    mutating func receive(_ bytes: ArraySlice<UInt8>) -> SOCKSHandshakeAction {
        switch self {
        case .four(var machine):
            defer { self = .four(machine) }
            return machine.receive(bytes)
        case .five(var machine):
            defer { self = .five(machine) }
            return machine.receive(bytes)
        }
    }

    mutating func endOfStream() -> SOCKSHandshakeAction {
        switch self {
        case .four(var machine):
            defer { self = .four(machine) }
            return machine.endOfStream()
        case .five(var machine):
            defer { self = .five(machine) }
            return machine.endOfStream()
        }
    }
}

/// The executable's entry (see `runLibFuzzer`).
@_cdecl("FuzzSOCKS_main")
public func fuzzSOCKSMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc: argc, argv: argv) { data, size in fuzzSOCKS(data, size) }
}
