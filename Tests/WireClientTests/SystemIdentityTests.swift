import FoundationEssentials
import Testing
import Wire

/// Wire's `SystemIdentity` (the `uname(2)` seam WireClient's `User-Agent` uses) against the kernel's own files.
@Suite struct SystemIdentityTests {
    @Test func matchesTheKernel() throws {
        let identity = SystemIdentity.current
        let release = try Data(contentsOf: URL(fileURLWithPath: "/proc/sys/kernel/osrelease"))
        #expect(identity.release == String(decoding: release, as: UTF8.self).split(separator: "\n").first.map(String.init))
        #expect(identity.systemName == "Linux")
        #if arch(x86_64)
        #expect(identity.machine == "x86_64")
        #elseif arch(arm64)
        #expect(identity.machine == "aarch64")
        #endif
    }
}
