import Foundation
import Testing
import Wire
import WireClient
import WireTestSupport

/// `SessionManager.poolSnapshots`: the state of the session's connection pools, as `HTTPClient.poolSnapshots()` gives
/// it, for a service that watches its HTTP client's load.
@Suite(.sharedIO(minutes: 1))
struct SessionPoolSnapshotTests {
    @Test func aSessionShowsItsPoolPerOriginWithTheConnectionsItOpened() async throws {
        try await LoopbackServer.with({ _, response in
            try await response.reply(200, "{}", headers: ["Content-Type": "application/json"])
        }) { server in
            let manager = SessionManager()
            #expect(manager.poolSnapshots.isEmpty, "no request yet, no pool")
            for path in ["/a", "/b", "/c"] {
                _ = try await manager.data(for: ClientRequest(url: server.url(path)))
            }
            let pools = manager.poolSnapshots
            #expect(pools.count == 1)
            let pool = try #require(pools.first)
            #expect(pool.origin.contains("127.0.0.1"))
            // Three requests in turn over one keep-alive connection, idle now.
            #expect(pool.connectionsOpened == 1)
            #expect(pool.open == 1 && pool.idle == 1 && pool.leased == 0 && pool.waiters == 0)
            manager.invalidateSession(cancelingTasks: true)
        }
    }
}
