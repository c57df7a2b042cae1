import FoundationNetworking
import Testing
import WireClient

/// A file that imports FoundationNetworking and WireClient sees two `URLCache` types; `WireClient.URLCache` names
/// WireClient's (its doc comment says why the name is shared). This file compiles only while that holds.
@Suite struct URLCacheQualifiedNameTests {
    @Test func theModuleQualifiedNameIsWireClientsCache() {
        let cache = WireClient.URLCache(memoryCapacity: 4096, diskCapacity: 0, directory: nil)
        var configuration = SessionConfiguration.ephemeral
        configuration.urlCache = cache
        #expect(configuration.urlCache === cache)
        #expect(cache.memoryCapacity == 4096 && cache.directory == nil)
        // Foundation's class stays reachable by its own qualified name, and is another type.
        let foundations: AnyClass = FoundationNetworking.URLCache.self
        #expect(ObjectIdentifier(foundations) != ObjectIdentifier(WireClient.URLCache.self))
    }
}
