import Testing
import Wire

struct HappyEyeballsTests {
    let v4a = try! SocketAddress(ipAddress: "192.0.2.1", port: 80)
    let v4b = try! SocketAddress(ipAddress: "192.0.2.2", port: 80)
    let v6a = try! SocketAddress(ipAddress: "2001:db8::1", port: 80)
    let v6b = try! SocketAddress(ipAddress: "2001:db8::2", port: 80)
    let t0 = Deadline(uptimeNanoseconds: 1_000_000_000)
    let refused = IOError(syscall: "connect", errno: .connectionRefused)

    @Test func interleavesFamiliesStartingWithIPv6() {
        #expect(HappyEyeballs.interleaved([v4a, v4b, v6a, v6b]) == [v6a, v4a, v6b, v4b])
        #expect(HappyEyeballs.interleaved([v4a, v4b]) == [v4a, v4b])
        #expect(HappyEyeballs.interleaved([v6a, v4a, v4b]) == [v6a, v4a, v4b])
    }

    @Test func startsOneAttemptAndArmsTheDelay() {
        var race = HappyEyeballs(addresses: [v4a, v6a])
        #expect(
            race.start(now: t0) == [.startAttempt(attempt: 0, address: v6a), .scheduleNextAttempt(at: t0 + .milliseconds(250))])
    }

    @Test func delayElapsingStartsTheNextAttemptAlongside() {
        var race = HappyEyeballs(addresses: [v6a, v4a, v4b])
        _ = race.start(now: t0)
        let t1 = t0 + .milliseconds(250)
        #expect(
            race.attemptDelayElapsed(now: t1) == [
                .startAttempt(attempt: 1, address: v4a), .scheduleNextAttempt(at: t1 + .milliseconds(250)),
            ])
        // The second connects first: it wins and the first is cancelled.
        #expect(race.attemptSucceeded(1) == [.succeed(attempt: 1, cancel: [0])])
        #expect(race.attemptSucceeded(0) == [], "a late winner after the race ended is ignored")
        #expect(race.attemptDelayElapsed(now: t1 + .seconds(1)) == [])
    }

    @Test func failureStartsTheNextAttemptAtOnce() {
        var race = HappyEyeballs(addresses: [v4a, v4b])
        _ = race.start(now: t0)
        let t1 = t0 + .milliseconds(5)
        #expect(race.attemptFailed(0, error: refused, now: t1) == [.startAttempt(attempt: 1, address: v4b)])
        #expect(race.attemptSucceeded(1) == [.succeed(attempt: 1, cancel: [])])
    }

    @Test func allFailingReportsEveryFailure() {
        var race = HappyEyeballs(addresses: [v4a, v4b])
        _ = race.start(now: t0)
        _ = race.attemptDelayElapsed(now: t0 + .milliseconds(250))
        #expect(race.attemptFailed(1, error: refused, now: t0 + .milliseconds(260)) == [])
        let unreachable = IOError(syscall: "connect", errno: .hostUnreachable)
        #expect(
            race.attemptFailed(0, error: unreachable, now: t0 + .milliseconds(270)) == [
                .fail([.init(address: v4b, error: refused), .init(address: v4a, error: unreachable)])
            ])
    }

    @Test func noAddressesFailsAtOnce() {
        var race = HappyEyeballs(addresses: [])
        #expect(race.start(now: t0) == [.fail([])])
    }
}
