import Foundation
import Testing
import WireClient
import WireTestSupport

/// The manager against a real nginx: the baseline the range, compression and caching suites build on.
@Suite(.sharedIO(minutes: 1), .enabled(if: TestNginx.isInstalled, "nginx is not installed"))
struct HTTPSessionManagerNginxTests {
    @Test func getsAStaticFileWithItsLength() async throws {
        let body = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let nginx = try TestNginx(files: ["blob.bin": body])
        defer { nginx.stop() }
        let manager = try HTTPSessionManager(baseURL: nginx.baseURL)
        manager.responseSerializer = HTTPResponseSerializer()
        defer { manager.session.invalidateSession(cancelingTasks: true) }
        let result = try await manager.get("blob.bin")
        #expect(result.data == body)
        #expect(result.response?.statusCode == 200)
        #expect(result.response?.expectedContentLength == 5000)
    }
}
