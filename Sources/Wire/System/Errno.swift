import CWireLinux
import Glibc

/// An error number reported by the kernel or the C library.
///
/// Wire names the values it reasons about in Swift words (`.wouldBlock`, `.connectionRefused`);
/// any other value is still carried exactly, and `description` gives the C library's text.
public struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw C `errno` value.
    public let rawValue: CInt

    /// Wraps a raw C `errno` value.
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    static var current: Errno { Errno(rawValue: errno) }

    /// `EINTR`: a signal interrupted the call.
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EAGAIN`/`EWOULDBLOCK`: a non-blocking call would have blocked.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// `EINPROGRESS`: a non-blocking connect has started.
    public static let inProgress = Errno(rawValue: EINPROGRESS)
    /// `EBADF`: not an open descriptor (a programming error in Wire).
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// `ECONNREFUSED`: nothing listens at the address.
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    /// `ECONNRESET`: the peer reset the connection.
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    /// `EPIPE`: writing to a connection the peer has closed.
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// `ETIMEDOUT`: the connection attempt timed out in the kernel.
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    /// `ENETUNREACH`: no route to the network.
    public static let networkUnreachable = Errno(rawValue: ENETUNREACH)
    /// `EHOSTUNREACH`: no route to the host.
    public static let hostUnreachable = Errno(rawValue: EHOSTUNREACH)
    /// `EADDRINUSE`: the address is already bound.
    public static let addressInUse = Errno(rawValue: EADDRINUSE)
    /// `EADDRNOTAVAIL`: the address is not available on this machine.
    public static let addressNotAvailable = Errno(rawValue: EADDRNOTAVAIL)
    /// `ENOENT`: no such file (a Unix socket path that does not exist).
    public static let noSuchFile = Errno(rawValue: ENOENT)
    /// `EMFILE`: the process is out of file descriptors.
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    /// `ENOTCONN`: the socket is not connected.
    public static let notConnected = Errno(rawValue: ENOTCONN)
    /// `ECONNABORTED`: a connection was aborted before `accept` took it.
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
    /// `EINVAL`: an invalid argument.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// `EAFNOSUPPORT`: the address family is not supported (no local address of that family to bind to).
    public static let addressFamilyNotSupported = Errno(rawValue: EAFNOSUPPORT)

    /// The C library's message for this error, as `strerror(3)` gives it.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: 256)
        // Glibc's GNU strerror_r may return a static string instead of filling the buffer.
        let message = buffer.withUnsafeMutableBufferPointer { c_wire_strerror(rawValue, $0.baseAddress!, $0.count) }
        return message.map { String(cString: $0) } ?? "errno \(rawValue)"
    }
}

/// A failed system call: which call, and the `errno` it set.
///
/// Every error that leaves Wire's system layer is one of these, so a log line always says
/// exactly what the kernel refused and why (`connect: Connection refused (errno 111)`).
public struct IOError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The name of the system call that failed, as in its manual page (`connect`, `epoll_ctl`).
    public let syscall: String
    /// The error the call reported.
    public let errno: Errno

    /// Creates an error for a failed call.
    public init(syscall: String, errno: Errno) {
        self.syscall = syscall
        self.errno = errno
    }

    /// `syscall: message (errno N)`.
    public var description: String { "\(syscall): \(errno) (errno \(errno.rawValue))" }
}
