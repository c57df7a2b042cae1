import CWireLinux
import Glibc

/// A `NETLINK_ROUTE` socket: the kernel's channel for interfaces, addresses and routes. Non-blocking, with one owner.
///
/// Bound to multicast `groups` it hears of every change (the monitor on an event loop); bound to none it is a
/// private channel for dumps and route lookups (`exchange`). A socket belongs to the network namespace of the
/// thread that opened it, whichever thread reads it later.
package struct RouteNetlinkSocket: ~Copyable, Sendable {
    private var descriptor: FileDescriptor

    /// `RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE`: what
    /// reachability depends on.
    package static let reachabilityGroups: UInt32 = 0x1 | 0x10 | 0x40 | 0x100 | 0x400

    /// The largest datagram read: the kernel sizes dump datagrams to at most 32 KiB.
    static let datagramCapacity = 64 * 1024

    /// Opens a socket bound to `groups` (0: none), with a receive buffer of at least `receiveBufferSize` bytes when
    /// given (a larger one makes `ENOBUFS` rarer under a burst of changes).
    ///
    /// - Throws: `IOError` from `socket(2)` (say `EAFNOSUPPORT` where netlink is unavailable), `setsockopt(2)`
    ///   or `bind(2)`.
    package init(groups: UInt32, receiveBufferSize: Int? = nil) throws(IOError) {
        // Configured before it becomes `descriptor`: on a throw, `socket` goes away and closes it.
        let socket = try Posix.socket(domain: AF_NETLINK, type: CInt(SOCK_RAW.rawValue), protocol: 0)  // NETLINK_ROUTE
        let fd = socket.rawValue
        if let receiveBufferSize {
            try Posix.setOption(fd, level: SOL_SOCKET, name: SO_RCVBUF, value: CInt(clamping: receiveBufferSize))
        }
        _ = try systemCall("bind") { c_wire_netlink_bind(fd, groups) }
        descriptor = socket
    }

    /// The raw descriptor, for an event loop's registration; -1 once closed.
    package var rawValue: CInt { descriptor.rawValue }

    /// Whether the socket is still open.
    package var isOpen: Bool { descriptor.isOpen }

    /// Sends one request to the kernel; `.wouldBlock` when the socket cannot take it now.
    package func send(_ request: [UInt8]) throws(IOError) -> IOResult<Void> {
        let fd = descriptor.rawValue
        let outcome = request.withUnsafeBytes { bytes in
            Result { () throws(IOError) -> IOResult<Int> in
                try nonBlockingCall("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, 0) }
            }
        }
        switch try outcome.get() {
        case .processed: return .processed(())
        case .wouldBlock: return .wouldBlock
        }
    }

    /// Reads one datagram; `.wouldBlock` when none is waiting.
    ///
    /// - Throws: `IOError` from `recv(2)`: `ENOBUFS` when the kernel dropped messages because the receive buffer
    ///   was full (the state must be dumped again), `EMSGSIZE` for a datagram larger than 64 KiB.
    package func receive() throws(IOError) -> IOResult<[UInt8]> {
        let fd = descriptor.rawValue
        var datagram = [UInt8](repeating: 0, count: Self.datagramCapacity)
        let outcome = datagram.withUnsafeMutableBytes { buffer in
            Result { () throws(IOError) -> IOResult<Int> in
                // MSG_TRUNC makes recv return the datagram's real length, so a cut one is noticed.
                try nonBlockingCall("recv") { Glibc.recv(fd, buffer.baseAddress, buffer.count, CInt(MSG_TRUNC)) }
            }
        }
        switch try outcome.get() {
        case .wouldBlock:
            return .wouldBlock
        case .processed(let length):
            guard length <= Self.datagramCapacity else { throw IOError(syscall: "recv", errno: Errno(rawValue: EMSGSIZE)) }
            datagram.removeLast(Self.datagramCapacity - length)
            return .processed(datagram)
        }
    }

    /// Sends `request` and collects the messages answering it (those with `sequence`), waiting at most `timeout`
    /// in all: through `NLMSG_DONE` for a dump, else the first reply or error.
    ///
    /// - Throws: `RouteNetlinkExchangeError`.
    package func exchange(_ request: [UInt8], sequence: UInt32, isDump: Bool, timeout: Duration) throws(RouteNetlinkExchangeError)
        -> [RouteNetlinkMessage]
    {
        let deadline =
            Posix.monotonicNanoseconds() &+ UInt64(max(0, timeout.components.seconds)) * 1_000_000_000
            &+ UInt64(max(0, timeout.components.attoseconds / 1_000_000_000))
        do {
            while case .wouldBlock = try send(request) {
                guard try waitUntil(deadline, events: Int16(POLLOUT)) else { throw RouteNetlinkExchangeError.timedOut }
            }
        } catch let error as IOError {
            throw .io(error)
        } catch let error as RouteNetlinkExchangeError {
            throw error
        } catch {
            throw .timedOut
        }
        var answer: [RouteNetlinkMessage] = []
        while true {
            let received: IOResult<[UInt8]>
            do { received = try receive() } catch { throw .io(error) }
            guard case .processed(let datagram) = received else {
                let ready: Bool
                do { ready = try waitUntil(deadline, events: Int16(POLLIN)) } catch { throw .io(error) }
                guard ready else { throw .timedOut }
                continue
            }
            let messages: [RouteNetlinkMessage]
            do { messages = try RouteNetlinkParser.messages(in: datagram) } catch { throw .malformed(error) }
            for message in messages where message.sequence == sequence {
                switch message.payload {
                case .done: return answer
                case .error(let errno) where errno != 0 || isDump:
                    // A dump ends with DONE; an error (even an ack, which a dump never sends) ends either.
                    answer.append(message)
                    return answer
                default:
                    answer.append(message)
                    if !isDump { return answer }
                }
            }
        }
    }

    /// Waits with poll(2) until the socket is ready for `events` or `deadline` (monotonic ns) passes.
    private func waitUntil(_ deadline: UInt64, events: Int16) throws(IOError) -> Bool {
        while true {
            let now = Posix.monotonicNanoseconds()
            guard now < deadline else { return false }
            var request = pollfd(fd: descriptor.rawValue, events: events, revents: 0)
            let milliseconds = CInt(clamping: (deadline - now + 999_999) / 1_000_000)
            let count = try systemCall("poll") { Glibc.poll(&request, 1, milliseconds) }
            if count > 0 { return true }
        }
    }

    /// Closes the socket; closing twice is a programming error.
    package mutating func close() throws(IOError) {
        try descriptor.close()
    }
}

/// Why a request to the routing netlink got no usable answer.
package enum RouteNetlinkExchangeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A system call failed.
    case io(IOError)
    /// The kernel's answer did not parse.
    case malformed(RouteNetlinkParseError)
    /// No complete answer in the time allowed.
    case timedOut

    package var description: String {
        switch self {
        case .io(let error): "routing netlink: \(error)"
        case .malformed(let error): "routing netlink: \(error)"
        case .timedOut: "routing netlink: no answer in time"
        }
    }
}

extension IOError {
    /// Whether a netlink socket reported `ENOBUFS`: its receive buffer overflowed and notifications were lost.
    package var isNetlinkOverflow: Bool { errno.rawValue == ENOBUFS }
}
