import Testing

import Glibc

/// The sanitizer the test process runs under (`swift test --sanitize=thread` or `=address`), found by its runtime's
/// entry points, which the sanitizer links into the executable and exports.
///
/// Tests that measure memory or time skip themselves under one (`.disabled(if: Sanitizer.current != nil, …)`): shadow
/// memory, the freed-memory quarantine and code slowed several times over distort what they measure. Time limits of
/// the others grow by `timeScale`, so a slowed test still ends, and fails alone if it hangs.
public enum Sanitizer: String, Sendable {
    case thread = "ThreadSanitizer"
    case address = "AddressSanitizer"

    /// The sanitizer of this process, or nil in a normal build.
    public static let current: Sanitizer? = {
        guard let program = dlopen(nil, RTLD_NOW) else { return nil }
        defer { dlclose(program) }
        if dlsym(program, "__tsan_acquire") != nil { return .thread }
        if dlsym(program, "__asan_init") != nil { return .address }
        return nil
    }()

    /// How much longer a test's time limits are under the current sanitizer: ThreadSanitizer slows instrumented code
    /// 5-15 times, AddressSanitizer about twice.
    public static var timeScale: Double {
        switch current {
        case .thread: 6
        case .address: 3
        case nil: 1
        }
    }

    /// Why a test that measures is skipped under a sanitizer, for `.disabled(if:_:)`.
    public static let distortsMeasurements: Comment = "measures memory or time, which a sanitizer distorts"
}
