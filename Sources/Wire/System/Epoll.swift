import CWireLinux
import Glibc

/// What a registered descriptor is waited on for.
public struct Interest: OptionSet, Hashable, Sendable {
    /// The raw bit set.
    public let rawValue: UInt8
    /// Creates an interest set from raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Readable: bytes, a new connection, or end of stream are waiting.
    public static let read = Interest(rawValue: 1 << 0)
    /// Writable: the socket can take more bytes, or a connect completed.
    public static let write = Interest(rawValue: 1 << 1)
    /// Nothing but errors and hang-ups.
    public static let none: Interest = []

    var epollEvents: UInt32 {
        // Level-triggered on purpose: a handler that stops early (back-pressure, a read budget)
        // is woken again while bytes remain, so no readiness can be lost between iterations.
        var events = EPOLLRDHUP.rawValue
        if contains(.read) { events |= EPOLLIN.rawValue }
        if contains(.write) { events |= EPOLLOUT.rawValue }
        return events
    }
}

/// One readiness report from `epoll_wait(2)`.
struct ReadinessEvent {
    /// The registration key given to `epoll_ctl`.
    var key: UInt64
    var isReadable: Bool
    var isWritable: Bool
    /// The peer hung up or the socket has an error pending (EPOLLHUP, EPOLLERR, EPOLLRDHUP).
    var isHangUp: Bool
    var isError: Bool
}

/// An epoll instance (`epoll(7)`), the loop's selector.
struct Epoll: ~Copyable {
    private var descriptor: FileDescriptor
    private var events: [epoll_event]

    init(maxEventsPerWait: Int = 256) throws(IOError) {
        let fd = try systemCall("epoll_create1") { epoll_create1(CInt(EPOLL_CLOEXEC)) }
        descriptor = FileDescriptor(owning: fd)
        events = Array(repeating: epoll_event(), count: maxEventsPerWait)
    }

    func add(_ fd: CInt, key: UInt64, interest: Interest) throws(IOError) {
        var event = c_wire_epoll_event_make(interest.epollEvents, key)
        _ = try systemCall("epoll_ctl") { epoll_ctl(descriptor.rawValue, EPOLL_CTL_ADD, fd, &event) }
    }

    func modify(_ fd: CInt, key: UInt64, interest: Interest) throws(IOError) {
        var event = c_wire_epoll_event_make(interest.epollEvents, key)
        _ = try systemCall("epoll_ctl") { epoll_ctl(descriptor.rawValue, EPOLL_CTL_MOD, fd, &event) }
    }

    func remove(_ fd: CInt) throws(IOError) {
        var event = epoll_event()  // ignored, but kernels before 2.6.9 required non-null
        _ = try systemCall("epoll_ctl") { epoll_ctl(descriptor.rawValue, EPOLL_CTL_DEL, fd, &event) }
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) and calls `body` for each event.
    mutating func wait(timeoutMilliseconds: CInt, _ body: (ReadinessEvent) -> Void) throws(IOError) {
        let epfd = descriptor.rawValue
        let count = try events.withUnsafeMutableBufferPointer { (buffer) throws(IOError) -> Int in
            Int(try systemCall("epoll_wait") { epoll_wait(epfd, buffer.baseAddress, CInt(buffer.count), timeoutMilliseconds) })
        }
        for index in 0..<count {
            let raw = events.withUnsafeBufferPointer { buffer in
                (c_wire_epoll_event_data(buffer.baseAddress! + index), c_wire_epoll_event_events(buffer.baseAddress! + index))
            }
            let flags = raw.1
            body(ReadinessEvent(
                key: raw.0,
                isReadable: flags & EPOLLIN.rawValue != 0,
                isWritable: flags & EPOLLOUT.rawValue != 0,
                isHangUp: flags & (EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0,
                isError: flags & EPOLLERR.rawValue != 0
            ))
        }
    }
}

/// An eventfd (`eventfd(2)`): the loop's doorbell for work queued from other threads.
struct EventFD: ~Copyable {
    private(set) var descriptor: FileDescriptor

    init() throws(IOError) {
        let fd = try systemCall("eventfd") { eventfd(0, CInt(EFD_NONBLOCK) | CInt(EFD_CLOEXEC)) }
        descriptor = FileDescriptor(owning: fd)
    }

    var rawValue: CInt { descriptor.rawValue }

    /// Rings the doorbell. A full counter (EAGAIN) means the loop is already woken.
    func signal() {
        var one: UInt64 = 1
        let fd = descriptor.rawValue
        _ = try? nonBlockingCall("write") { Glibc.write(fd, &one, MemoryLayout<UInt64>.size) }
    }

    /// Resets the doorbell after a wake-up.
    func drain() {
        var value: UInt64 = 0
        let fd = descriptor.rawValue
        _ = try? nonBlockingCall("read") { Glibc.read(fd, &value, MemoryLayout<UInt64>.size) }
    }
}
