import CWireLinux
import Glibc

extension Posix {
    /// Whole seconds since the Unix epoch from `CLOCK_REALTIME`: the wall clock, for the `Date`
    /// header a server sends (RFC 9110 §6.6.1). Never use it to measure intervals; it can jump.
    /// The corresponding C function is `clock_gettime(2)`.
    package static func wallClockSeconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int(now.tv_sec)
    }
}
