import Testing
import Wire

/// A metrics snapshot keeps its timings as whole nanoseconds and its connection's facts behind a shared reference;
/// neither shows through its properties or its equality.
@Suite struct HTTPClientMetricsSnapshotTests {
    @Test func timingsReadBackWhatWasSetToTheNanosecond() {
        var timings = HTTPClientMetrics(start: .now()).snapshot.timings
        #expect(timings.firstByte == nil && timings.lastByte == nil && timings.nameResolved == nil)
        timings.firstByte = .nanoseconds(1_500)
        timings.lastByte = .seconds(3)
        timings.connected = .zero
        #expect(timings.firstByte == .nanoseconds(1_500))
        #expect(timings.lastByte == .seconds(3))
        #expect(timings.connected == .zero)
        // Below the clock's resolution: kept to the whole nanosecond, toward zero.
        timings.requestSent = Duration(secondsComponent: 0, attosecondsComponent: 2_700_000_000)
        #expect(timings.requestSent == .nanoseconds(2))
        timings.secureConnected = .nanoseconds(-4)
        #expect(timings.secureConnected == .nanoseconds(-4))
        timings.firstByte = nil
        #expect(timings.firstByte == nil)
        // The earliest instant 64 bits of nanoseconds hold stays a time, not the nil marker.
        timings.nameResolved = .seconds(-10_000_000_000)
        #expect(timings.nameResolved != nil)
    }

    @Test func connectionFactsCompareByValueAndVanishWhenCleared() throws {
        let empty = HTTPClientMetrics(start: .now()).snapshot
        var snapshot = empty
        let remote = try SocketAddress(ipAddress: "127.0.0.1", port: 8080)
        let local = try SocketAddress(ipAddress: "127.0.0.1", port: 40_000)
        snapshot.remoteAddress = remote
        snapshot.localAddress = local
        snapshot.connection = 7
        #expect(snapshot.remoteAddress == remote)
        #expect(snapshot.localAddress == local)
        #expect(snapshot.connection == 7)
        #expect(snapshot.transportSecurity == nil)
        #expect(snapshot != empty)

        // Made field by field in another order: equal, and hashed alike.
        var other = empty
        other.connection = 7
        other.localAddress = local
        other.remoteAddress = remote
        #expect(other == snapshot)
        #expect(Set([other, snapshot]).count == 1)

        // A copy changed does not change the original (the facts are shared, never changed in place).
        var copy = snapshot
        copy.connection = 8
        #expect(snapshot.connection == 7 && copy.connection == 8)

        snapshot.remoteAddress = nil
        snapshot.localAddress = nil
        snapshot.connection = nil
        #expect(snapshot == empty)
    }
}
