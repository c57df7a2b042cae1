import Testing
import Wire

extension IOSuite {
    /// A group that cannot have a loop is refused with a typed error, not a trap.
    @Suite struct EventLoopGroupConfigurationTests {
        @Test(arguments: [0, -1])
        func aLoopCountBelowOneIsRefused(_ loopCount: Int) {
            #expect(throws: ConfigurationError(field: "loopCount", value: "\(loopCount)", requirement: "at least 1")) {
                let group = try EventLoopGroup(loopCount: loopCount)
                group.shutdown()
            }
        }
    }
}
