import Glibc

/// Reads the process environment (`getenv(3)`), for the rooms above that follow it (the proxy variables,
/// `SSLKEYLOGFILE`).
package enum ProcessEnvironment {
    /// The value of `name`, or nil when it is not set. An empty value is returned as it is: what it means is the
    /// caller's rule.
    package static func value(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}
