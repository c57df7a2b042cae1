import Glibc

/// What `uname(2)` says about the running kernel and machine: the parts of a `User-Agent` the layers above write
/// (WireClient's default is `"<product>/<version> (Linux <release>; <machine>)"`).
public struct SystemIdentity: Sendable, Hashable {
    /// The kernel's name (`sysname`), `Linux` here.
    public var systemName: String
    /// The kernel release (`release`), e.g. `6.8.0-45-generic`.
    public var release: String
    /// The hardware name (`machine`), e.g. `x86_64` or `aarch64`.
    public var machine: String

    /// Creates an identity from its parts (tests inject one).
    /// - Parameters:
    ///   - systemName: The kernel's name.
    ///   - release: The kernel release.
    ///   - machine: The hardware name.
    public init(systemName: String, release: String, machine: String) {
        self.systemName = systemName
        self.release = release
        self.machine = machine
    }

    /// The running system's identity; empty strings if `uname(2)` fails (it cannot on Linux, but no caller should
    /// trap for a header value). The corresponding C function is `uname`.
    public static var current: SystemIdentity {
        var names = utsname()
        guard uname(&names) == 0 else { return SystemIdentity(systemName: "", release: "", machine: "") }
        return SystemIdentity(
            systemName: text(of: &names.sysname),
            release: text(of: &names.release),
            machine: text(of: &names.machine)
        )
    }

    /// The NUL-terminated text in a fixed `utsname` field (a tuple of `CChar`), bounded by the field's size.
    private static func text<Field>(of field: inout Field) -> String {
        withUnsafeBytes(of: &field) { bytes in
            let end = bytes.firstIndex(of: 0) ?? bytes.count
            return String(decoding: bytes[..<end], as: UTF8.self)
        }
    }
}
