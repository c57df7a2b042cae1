import CWireLinux
import Glibc

/// CPU time spent by the process or by one thread, user and system, as `getrusage(2)` reports it.
package struct CPUTime: Sendable, Hashable {
    /// Time spent running user code.
    package var user: Duration
    /// Time the kernel spent on the caller's behalf (system calls, the TCP stack for its sends).
    package var system: Duration

    /// Creates a reading.
    package init(user: Duration, system: Duration) {
        self.user = user
        self.system = system
    }

    /// User plus system time.
    package var total: Duration { user + system }

    /// The CPU time of the whole process so far: every thread, live or ended.
    /// The corresponding C function is `getrusage(RUSAGE_SELF)`.
    package static func process() -> CPUTime {
        var usage = rusage()
        // getrusage can only fail with EFAULT or EINVAL, both impossible with these arguments.
        _ = getrusage(RUSAGE_SELF.rawValue, &usage)
        return CPUTime(usage)
    }

    /// The CPU time of the calling thread so far. The corresponding C function is `getrusage(RUSAGE_THREAD)`.
    package static func currentThread() -> CPUTime {
        var usage = rusage()
        _ = c_wire_getrusage_thread(&usage)
        return CPUTime(usage)
    }

    /// The time spent between `earlier` and this reading.
    package func since(_ earlier: CPUTime) -> CPUTime {
        CPUTime(user: user - earlier.user, system: system - earlier.system)
    }

    /// Sums two readings (several threads' shares).
    package static func + (lhs: CPUTime, rhs: CPUTime) -> CPUTime {
        CPUTime(user: lhs.user + rhs.user, system: lhs.system + rhs.system)
    }

    /// No time at all.
    package static let zero = CPUTime(user: .zero, system: .zero)

    private init(_ usage: rusage) {
        self.init(user: Self.duration(usage.ru_utime), system: Self.duration(usage.ru_stime))
    }

    private static func duration(_ time: timeval) -> Duration {
        .seconds(time.tv_sec) + .microseconds(time.tv_usec)
    }
}
