import CWireLinux
import Glibc
import Synchronization

/// What a registered descriptor is waited on for.
package struct Interest: OptionSet, Hashable, Sendable {
    /// The raw bit set.
    package let rawValue: UInt8
    /// Creates an interest set from raw bits.
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Readable: bytes, a new connection, or end of stream are waiting.
    package static let read = Interest(rawValue: 1 << 0)
    /// Writable: the socket can take more bytes, or a connect completed.
    package static let write = Interest(rawValue: 1 << 1)
    /// Nothing but errors and hang-ups.
    package static let none: Interest = []

    var epollEvents: UInt32 {
        // Level-triggered on purpose: a handler that stops early (back-pressure, a read budget)
        // is woken again while bytes remain, so no readiness can be lost between iterations.
        // For the same reason EPOLLRDHUP goes only with EPOLLIN: a half-closed peer keeps it
        // raised, and a socket that is not reading would be reported on every wait, spinning.
        var events: UInt32 = 0
        if contains(.read) { events |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if contains(.write) { events |= EPOLLOUT.rawValue }
        return events
    }
}

/// One readiness report from `epoll_pwait2(2)` (`epoll_wait(2)` on kernels before 5.11). `package`, with
/// `Selectable` and the loop's `register`, so a module above Wire can watch a descriptor kind of its own on a loop.
package struct ReadinessEvent {
    /// The registration key given to `epoll_ctl`.
    package var key: UInt64
    /// The descriptor can be read (or accepted from).
    package var isReadable: Bool
    /// The descriptor can be written.
    package var isWritable: Bool
    /// The peer shut down its side (EPOLLRDHUP) or both sides are down (EPOLLHUP).
    package var isHangUp: Bool
    /// Both directions are down (EPOLLHUP): reported whatever the interest, so a socket that is
    /// not reading must act on it or be reported again on every wait.
    package var isFullHangUp: Bool
    /// The descriptor has a pending error (EPOLLERR).
    package var isError: Bool
}

/// An epoll instance (`epoll(7)`), the loop's selector.
struct Epoll: ~Copyable {
    private var descriptor: FileDescriptor
    // A fixed allocation the kernel fills, so `wait` need not mutate `self`: handlers may
    // register descriptors while the loop is still walking one batch of events.
    private let events: UnsafeMutableBufferPointer<epoll_event>

    init(maxEventsPerWait: Int) throws(IOError) {
        let fd = try systemCall("epoll_create1") { epoll_create1(CInt(EPOLL_CLOEXEC)) }
        descriptor = FileDescriptor(owning: fd)
        events = .allocate(capacity: maxEventsPerWait)
        events.initialize(repeating: epoll_event())
    }

    deinit {
        events.deallocate()
    }

    /// Closes the epoll descriptor.
    mutating func close() {
        if descriptor.isOpen { try? descriptor.close() }
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

    /// Whether the kernel has `epoll_pwait2` (Linux 5.11+); learned from the first ENOSYS.
    private static let hasNanosecondWait = Atomic<Bool>(true)

    /// Waits up to `timeoutNanoseconds` (nil: forever) and replaces `ready` with what happened.
    ///
    /// Uses `epoll_pwait2(2)` so timers fire within microseconds of their deadline, and falls
    /// back to `epoll_wait(2)`, whose timeout is rounded up to whole milliseconds, on older kernels.
    func wait(timeoutNanoseconds: UInt64?, into ready: inout [ReadinessEvent]) throws(IOError) {
        let epfd = descriptor.rawValue
        let events = self.events
        var count = -1
        if Self.hasNanosecondWait.load(ordering: .relaxed) {
            do {
                count = Int(
                    try systemCall("epoll_pwait2") { () -> CInt in
                        guard let timeout = timeoutNanoseconds else {
                            return c_wire_epoll_pwait2(epfd, events.baseAddress, CInt(events.count), nil)
                        }
                        var spec = timespec(tv_sec: Int(timeout / 1_000_000_000), tv_nsec: Int(timeout % 1_000_000_000))
                        return c_wire_epoll_pwait2(epfd, events.baseAddress, CInt(events.count), &spec)
                    })
            } catch  where error.errno.rawValue == ENOSYS {
                Self.hasNanosecondWait.store(false, ordering: .relaxed)
            }
        }
        if count < 0 {
            let milliseconds = timeoutNanoseconds.map { CInt(clamping: ($0 + 999_999) / 1_000_000) } ?? -1
            count = Int(try systemCall("epoll_wait") { epoll_wait(epfd, events.baseAddress, CInt(events.count), milliseconds) })
        }
        ready.removeAll(keepingCapacity: true)
        for index in 0..<count {
            let key = c_wire_epoll_event_data(events.baseAddress! + index)
            let flags = c_wire_epoll_event_events(events.baseAddress! + index)
            ready.append(
                ReadinessEvent(
                    key: key,
                    isReadable: flags & EPOLLIN.rawValue != 0,
                    isWritable: flags & EPOLLOUT.rawValue != 0,
                    isHangUp: flags & (EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0,
                    isFullHangUp: flags & EPOLLHUP.rawValue != 0,
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

    /// Closes the eventfd.
    mutating func close() {
        if descriptor.isOpen { try? descriptor.close() }
    }

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
