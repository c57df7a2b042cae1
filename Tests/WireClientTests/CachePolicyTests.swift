import Testing
import WireClient

/// The per-request setting enums keep their names through `Codable`: serializers archive them.
@Suite struct CachePolicyTests {
    @Test func rawValuesAreTheSwiftNames() {
        #expect(
            CachePolicy.allCases.map(\.rawValue) == [
                "useProtocolCachePolicy", "reloadIgnoringLocalCacheData", "returnCacheDataElseLoad", "returnCacheDataDontLoad",
            ])
        #expect(NetworkServiceType.allCases.map(\.rawValue) == ["default", "background", "video", "voice", "responsiveData"])
    }
}
