import CWireLinux
import Glibc

// Every libc call Wire makes goes through this folder. The wrappers:
// - retry EINTR (except close(2), where Linux has already released the descriptor:
//   https://lwn.net/Articles/576478/), so no caller ever sees it;
// - turn EAGAIN/EWOULDBLOCK into `IOResult.wouldBlock`, a value, not an error;
// - trap on EBADF and EFAULT, which can only mean a bug in Wire (a descriptor used after
//   close, a bad pointer), never something the network did;
// - name the call in the `IOError` they throw.
// They are `@inline(never)` so no retain/release the optimizer moves between the call and
// the read of `errno` can clobber it.

/// Runs a system call that returns -1 and sets `errno` on failure; retries EINTR.
@inline(never)
func systemCall<Result: FixedWidthInteger>(
    _ name: StaticString,
    _ body: () -> Result
) throws(IOError) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let error = Errno.current
        if error == .interrupted { continue }
        preconditionIsNotProgrammingError(error, name)
        throw IOError(syscall: String(describing: name), errno: error)
    }
}

/// Like `systemCall`, but EAGAIN/EWOULDBLOCK gives `.wouldBlock` instead of an error.
@inline(never)
func nonBlockingCall<Result: FixedWidthInteger>(
    _ name: StaticString,
    _ body: () -> Result
) throws(IOError) -> IOResult<Result> {
    while true {
        let result = body()
        if result != -1 { return .processed(result) }
        let error = Errno.current
        if error == .interrupted { continue }
        if error.rawValue == EAGAIN || error.rawValue == EWOULDBLOCK { return .wouldBlock }
        preconditionIsNotProgrammingError(error, name)
        throw IOError(syscall: String(describing: name), errno: error)
    }
}

@inline(__always)
private func preconditionIsNotProgrammingError(_ error: Errno, _ name: StaticString) {
    precondition(
        error.rawValue != EBADF && error.rawValue != EFAULT,
        "\(name) failed with \(error): Wire used a closed descriptor or a bad pointer"
    )
}

/// Thin, typed wrappers over the POSIX calls Wire uses, in their manual-page names.
package enum Posix {
    static func socket(domain: CInt, type: CInt, protocol: CInt = 0) throws(IOError) -> FileDescriptor {
        let fd = try systemCall("socket") {
            Glibc.socket(domain, type | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue), `protocol`)
        }
        return FileDescriptor(owning: fd)
    }

    static func setOption(_ fd: CInt, level: CInt, name: CInt, value: CInt) throws(IOError) {
        var value = value
        _ = try systemCall("setsockopt") {
            Glibc.setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<CInt>.size))
        }
    }

    /// Ties socket `fd` to the network interface `name` (`SO_BINDTODEVICE`): its packets leave and arrive only
    /// there. The corresponding C function is `setsockopt(2)`.
    static func bindToDevice(_ fd: CInt, name: String) throws(IOError) {
        var bytes = Array(name.utf8CString)
        _ = try systemCall("setsockopt") {
            Glibc.setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, &bytes, socklen_t(bytes.count))
        }
    }

    package static func getOption(_ fd: CInt, level: CInt, name: CInt) throws(IOError) -> CInt {
        var value: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        _ = try systemCall("getsockopt") { Glibc.getsockopt(fd, level, name, &value, &length) }
        return value
    }

    /// The bytes the kernel holds for reading on socket `fd` (its receive queue, without a received FIN). The
    /// corresponding C function is `ioctl(2)` with `FIONREAD`.
    static func readableByteCount(_ fd: CInt) throws(IOError) -> Int {
        var count: CInt = 0
        _ = try systemCall("ioctl") { c_wire_fionread(fd, &count) }
        return Int(count)
    }

    /// The bytes in socket `fd`'s send queue: not yet sent, or sent and not yet acknowledged by the peer. The
    /// corresponding C function is `ioctl(2)` with `SIOCOUTQ`.
    static func sendQueueByteCount(_ fd: CInt) throws(IOError) -> Int {
        var count: CInt = 0
        _ = try systemCall("ioctl") { c_wire_siocoutq(fd, &count) }
        return Int(count)
    }

    static func setLinger(_ fd: CInt, seconds: CInt?) throws(IOError) {
        var value = linger(l_onoff: seconds == nil ? 0 : 1, l_linger: seconds ?? 0)
        _ = try systemCall("setsockopt") {
            Glibc.setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
        }
    }

    static func bind(_ fd: CInt, to address: SocketAddress) throws(IOError) {
        _ = try address.withSockAddr { (pointer, length) throws(IOError) in
            try systemCall("bind") { Glibc.bind(fd, pointer, length) }
        }
    }

    static func listen(_ fd: CInt, backlog: CInt) throws(IOError) {
        _ = try systemCall("listen") { Glibc.listen(fd, backlog) }
    }

    /// Accepts one pending connection, and sets `peer` to its address, which accept4(2) writes in the same call (nil
    /// for a family Wire does not model); nil when none is waiting.
    static func accept(_ fd: CInt, peer: inout SocketAddress?) throws(IOError) -> FileDescriptor? {
        let flags = CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        var raw = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = try withUnsafeMutableBytes(of: &raw) { (bytes) throws(IOError) in
            let address = bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self)
            return try nonBlockingCall("accept4") { c_wire_accept4(fd, address, &length, flags) }
        }
        switch result {
        case .processed(let accepted):
            peer = try? SocketAddress.fromKernel(raw, length: Int(length))
            return FileDescriptor(owning: accepted)
        case .wouldBlock: return nil
        }
    }

    /// Starts a non-blocking connect. `.wouldBlock` means EINPROGRESS: wait for writability,
    /// then read the outcome with `pendingError`.
    static func connect(_ fd: CInt, to address: SocketAddress) throws(IOError) -> IOResult<Void> {
        while true {
            let result = address.withSockAddr { pointer, length in Glibc.connect(fd, pointer, length) }
            if result == 0 { return .processed(()) }
            let error = Errno.current
            switch error.rawValue {
            case EINTR: continue
            case EINPROGRESS, EAGAIN: return .wouldBlock
            default:
                preconditionIsNotProgrammingError(error, "connect")
                throw IOError(syscall: "connect", errno: error)
            }
        }
    }

    /// The error a completed non-blocking connect left (`SO_ERROR`), or nil on success.
    static func pendingError(_ fd: CInt) throws(IOError) -> Errno? {
        let value = try getOption(fd, level: SOL_SOCKET, name: SO_ERROR)
        return value == 0 ? nil : Errno(rawValue: value)
    }

    static func localAddress(_ fd: CInt) throws(IOError) -> SocketAddress {
        try SocketAddress.fromKernel { (pointer, length) throws(IOError) in
            _ = try systemCall("getsockname") { Glibc.getsockname(fd, pointer, length) }
        }
    }

    static func remoteAddress(_ fd: CInt) throws(IOError) -> SocketAddress {
        try SocketAddress.fromKernel { (pointer, length) throws(IOError) in
            _ = try systemCall("getpeername") { Glibc.getpeername(fd, pointer, length) }
        }
    }

    /// Reads into the buffer's writable space. `.processed(0)` is end of stream.
    static func read(_ fd: CInt, into buffer: inout ByteBuffer, maxBytes: Int) throws(IOError) -> IOResult<Int> {
        buffer.reserveWritableBytes(maxBytes)
        let result = try buffer.withUnsafeWritableBytes { (pointer) throws(IOError) -> IOResult<Int> in
            try nonBlockingCall("read") { Glibc.read(fd, pointer.baseAddress, min(pointer.count, maxBytes)) }
        }
        if case .processed(let count) = result { buffer.moveWriterIndex(forwardBy: count) }
        return result
    }

    /// Writes as much of `buffers` as the socket takes in one `sendmsg(2)`, with `MSG_NOSIGNAL`
    /// so a peer that has gone away gives EPIPE instead of killing the process with SIGPIPE.
    /// The iovec array lives on the stack: a write allocates nothing.
    static func send(_ fd: CInt, gathering buffers: ArraySlice<ByteBuffer>) throws(IOError) -> IOResult<Int> {
        if buffers.count == 1, let only = buffers.first { return try send(fd, only) }
        let count = buffers.count
        let outcome = withUnsafeTemporaryAllocation(of: iovec.self, capacity: count) { vectors in
            Result { () throws(IOError) -> IOResult<Int> in
                try withIOVectors(buffers[...], filling: vectors, at: 0) { () throws(IOError) -> IOResult<Int> in
                    var message = msghdr()
                    message.msg_iov = vectors.baseAddress
                    message.msg_iovlen = count
                    return try nonBlockingCall("sendmsg") { Glibc.sendmsg(fd, &message, CInt(MSG_NOSIGNAL)) }
                }
            }
        }
        return try outcome.get()
    }

    /// Writes as much of one buffer as the socket takes: `send(2)` with `MSG_NOSIGNAL`.
    static func send(_ fd: CInt, _ buffer: ByteBuffer) throws(IOError) -> IOResult<Int> {
        try buffer.withUnsafeReadableBytes { (bytes) throws(IOError) -> IOResult<Int> in try send(fd, bytes: bytes) }
    }

    /// Writes as much of `bytes` as the socket takes: `send(2)` with `MSG_NOSIGNAL`. For one buffer it is the
    /// cheaper call: the kernel copies in no message header and no iovec array.
    static func send(_ fd: CInt, bytes: UnsafeRawBufferPointer) throws(IOError) -> IOResult<Int> {
        try nonBlockingCall("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, CInt(MSG_NOSIGNAL)) }
    }

    /// Pins each buffer's bytes for the duration of `body` by nesting their scoped accessors,
    /// writing its iovec at `index`; callers pass at most a few dozen buffers, so the recursion
    /// stays shallow.
    private static func withIOVectors<R>(
        _ buffers: ArraySlice<ByteBuffer>,
        filling vectors: UnsafeMutableBufferPointer<iovec>,
        at index: Int,
        _ body: () throws(IOError) -> R
    ) throws(IOError) -> R {
        guard let first = buffers.first else { return try body() }
        return try first.withUnsafeReadableBytes { (bytes) throws(IOError) -> R in
            vectors[index] = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
            return try withIOVectors(buffers.dropFirst(), filling: vectors, at: index + 1, body)
        }
    }

    static func shutdown(_ fd: CInt, how: CInt) throws(IOError) {
        _ = try systemCall("shutdown") { Glibc.shutdown(fd, how) }
    }

    /// close(2), never retried: on Linux the descriptor is released even when EINTR is reported.
    static func close(_ fd: CInt) throws(IOError) {
        if Glibc.close(fd) == -1 {
            let error = Errno.current
            if error == .interrupted { return }
            preconditionIsNotProgrammingError(error, "close")
            throw IOError(syscall: "close", errno: error)
        }
    }

    /// The current value of `CLOCK_MONOTONIC` in nanoseconds.
    package static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// The current value of `CLOCK_MONOTONIC_COARSE` in nanoseconds: the same clock as `monotonicNanoseconds()` as of
    /// its last tick (1–4 ms behind at most), read without touching the clock hardware.
    package static func coarseMonotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// The resolution of `CLOCK_MONOTONIC_COARSE` in nanoseconds: the kernel's tick (4 ms at 250 Hz). The
    /// corresponding C function is `clock_getres(2)`.
    package static func coarseMonotonicResolutionNanoseconds() -> UInt64 {
        var resolution = timespec()
        guard clock_getres(CLOCK_MONOTONIC_COARSE, &resolution) == 0 else { return 10_000_000 }
        return UInt64(resolution.tv_sec) * 1_000_000_000 + UInt64(resolution.tv_nsec)
    }

    /// The kernel id of the calling thread.
    static func currentThreadID() -> CInt { c_wire_gettid() }

    /// Raises the soft limit on open descriptors to the hard limit; returns the new soft limit.
    static func raiseOpenFileLimit() -> Int {
        var limits = rlimit()
        guard getrlimit(CInt(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return 0 }
        limits.rlim_cur = limits.rlim_max
        _ = setrlimit(CInt(RLIMIT_NOFILE.rawValue), &limits)
        return Int(limits.rlim_cur)
    }
}

extension Posix {
    /// The number of online cores (`sysconf(_SC_NPROCESSORS_ONLN)`), at least 1.
    static func onlineCoreCount() -> Int { max(1, Int(sysconf(CInt(_SC_NPROCESSORS_ONLN)))) }
}

/// `pthread_self()`, for comparing threads.
func pthreadSelf() -> pthread_t { pthread_self() }

/// `sched_yield(2)`.
func sched_yield_() { _ = sched_yield() }
