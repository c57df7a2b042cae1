import Testing
import Wire

struct ConnectionPoolStateMachineTests {
    typealias Machine = ConnectionPoolStateMachine
    let t0 = Deadline(uptimeNanoseconds: 10_000_000_000)
    func c(_ value: Int) -> Machine.ConnectionID { .init(value: value) }
    func r(_ value: Int) -> Machine.RequestID { .init(value: value) }

    @Test func firstRequestOpensAConnectionAndGetsIt() {
        var pool = Machine(maxConnections: 2, idleTimeout: .seconds(60))
        #expect(pool.requestArrived(r(1), now: t0) == [.createConnection(c(0))])
        #expect(pool.connectionEstablished(c(0), now: t0) == [.lease(c(0), to: r(1), pipelined: false)])
    }

    @Test func releasedConnectionIsParkedAndReusedMostRecentlyUsedFirst() {
        var pool = Machine(maxConnections: 4, idleTimeout: .seconds(60))
        _ = pool.requestArrived(r(1), now: t0)
        _ = pool.requestArrived(r(2), now: t0)
        _ = pool.connectionEstablished(c(0), now: t0)
        _ = pool.connectionEstablished(c(1), now: t0)
        #expect(pool.connectionReleased(c(0), reusable: true, now: t0) == [.scheduleIdleTimeout(c(0), at: t0 + .seconds(60))])
        let t1 = t0 + .seconds(1)
        #expect(pool.connectionReleased(c(1), reusable: true, now: t1) == [.scheduleIdleTimeout(c(1), at: t1 + .seconds(60))])
        #expect(pool.requestArrived(r(3), now: t1) == [.cancelIdleTimeout(c(1)), .lease(c(1), to: r(3), pipelined: false)])
        #expect(pool.requestArrived(r(4), now: t1) == [.cancelIdleTimeout(c(0)), .lease(c(0), to: r(4), pipelined: false)])
    }

    /// The shell's per-request transitions without arrays (`takeIdleConnection`, `releaseToIdle`) leave the machine
    /// exactly where `requestArrived` and `connectionReleased` would: a twin fed the general events answers every
    /// later event alike, and each declines (changing nothing) where the general event would do something else.
    @Test func theArrayFreeTransitionsMatchTheGeneralOnes() {
        var fast = Machine(maxConnections: 2, idleTimeout: .seconds(60))
        var twin = fast
        let t1 = t0 + .seconds(1)
        func both(_ event: (inout Machine) -> [Machine.Action]) {
            let answer = event(&fast)
            #expect(event(&twin) == answer)
        }
        // Nothing idle: the fast lease declines; the general one opens a connection.
        #expect(fast.takeIdleConnection() == nil)
        both { $0.requestArrived(r(1), now: t0) }
        both { $0.connectionEstablished(c(0), now: t0) }
        // Released while nobody waits: parked with the same deadline.
        #expect(fast.releaseToIdle(c(0), now: t1) == t1 + .seconds(60))
        #expect(twin.connectionReleased(c(0), reusable: true, now: t1) == [.scheduleIdleTimeout(c(0), at: t1 + .seconds(60))])
        // Leased from idle: the same connection.
        #expect(fast.nextIdleConnection == c(0))
        #expect(fast.takeIdleConnection() == c(0))
        #expect(twin.requestArrived(r(2), now: t1) == [.cancelIdleTimeout(c(0)), .lease(c(0), to: r(2), pipelined: false)])
        // Waiters behind it: the fast release declines, and the general one hands the connection over.
        both { $0.requestArrived(r(3), now: t1) }
        both { $0.requestArrived(r(4), now: t1) }
        #expect(fast.releaseToIdle(c(0), now: t1) == nil)
        both { $0.connectionReleased(c(0), reusable: true, now: t1) }
        both { $0.connectionEstablished(c(1), now: t1) }
        both { $0.connectionReleased(c(0), reusable: true, now: t1) }
        both { $0.connectionReleased(c(1), reusable: true, now: t1) }
        both { $0.idleTimeoutFired(c(0), now: t1 + .seconds(61)) }
        // Shut down: both decline.
        both { $0.shutDown() }
        #expect(fast.takeIdleConnection() == nil)
        #expect(fast.releaseToIdle(c(1), now: t1) == nil)
        both { $0.requestArrived(r(5), now: t1) }
    }

    @Test func reportsOutOfStepChangeNothingOrCloseThatConnectionOnly() {
        var pool = Machine(maxConnections: 2, idleTimeout: .seconds(60))
        _ = pool.requestArrived(r(1), now: t0)
        #expect(pool.connectionEstablished(c(0), now: t0) == [.lease(c(0), to: r(1), pipelined: false)])
        // A second report of the same connection: ignored, the lease stands.
        #expect(pool.connectionEstablished(c(0), now: t0) == [])
        #expect(pool.isLeased(c(0)))
        // A failure reported for an open connection: it is gone.
        #expect(pool.connectionFailed(c(0)) == [.closeConnection(c(0))])
        #expect(!pool.tracks(c(0)))
        // A release of a connection parked idle: not reused.
        _ = pool.requestArrived(r(2), now: t0)
        _ = pool.connectionEstablished(c(1), now: t0)
        _ = pool.connectionReleased(c(1), reusable: true, now: t0)
        #expect(pool.connectionReleased(c(1), reusable: true, now: t0) == [.cancelIdleTimeout(c(1)), .closeConnection(c(1))])
        #expect(pool.connectionCount == 0 && pool.idleCount == 0)
    }

    @Test func requestsBeyondTheLimitWaitInFIFOOrder() {
        var pool = Machine(maxConnections: 1, idleTimeout: .seconds(60))
        #expect(pool.requestArrived(r(1), now: t0) == [.createConnection(c(0))])
        #expect(pool.requestArrived(r(2), now: t0) == [])
        #expect(pool.requestArrived(r(3), now: t0) == [])
        #expect(pool.connectionEstablished(c(0), now: t0) == [.lease(c(0), to: r(1), pipelined: false)])
        #expect(pool.connectionReleased(c(0), reusable: true, now: t0) == [.lease(c(0), to: r(2), pipelined: false)])
        #expect(pool.requestCancelled(r(3)) == [])
        #expect(pool.connectionReleased(c(0), reusable: true, now: t0) == [.scheduleIdleTimeout(c(0), at: t0 + .seconds(60))])
    }

    @Test func aWaiterDoesNotOpenASecondConnectionWhileOneIsOpeningForIt() {
        var pool = Machine(maxConnections: 8, idleTimeout: .seconds(60))
        #expect(pool.requestArrived(r(1), now: t0) == [.createConnection(c(0))])
        #expect(pool.requestArrived(r(2), now: t0) == [.createConnection(c(1))])
        _ = pool.requestCancelled(r(2))
        #expect(pool.connectionEstablished(c(0), now: t0) == [.lease(c(0), to: r(1), pipelined: false)])
        #expect(pool.connectionEstablished(c(1), now: t0) == [.scheduleIdleTimeout(c(1), at: t0 + .seconds(60))])
        #expect(pool.connectionCount == 2)
    }

    @Test func unreusableReleaseClosesAndOpensForWaiters() {
        var pool = Machine(maxConnections: 1, idleTimeout: .seconds(60))
        _ = pool.requestArrived(r(1), now: t0)
        _ = pool.requestArrived(r(2), now: t0)
        _ = pool.connectionEstablished(c(0), now: t0)
        #expect(pool.connectionReleased(c(0), reusable: false, now: t0) == [.closeConnection(c(0)), .createConnection(c(1))])
        #expect(pool.connectionEstablished(c(1), now: t0) == [.lease(c(1), to: r(2), pipelined: false)])
    }

    @Test func failedConnectFailsTheOldestWaiterOnly() {
        var pool = Machine(maxConnections: 1, idleTimeout: .seconds(60))
        _ = pool.requestArrived(r(1), now: t0)
        _ = pool.requestArrived(r(2), now: t0)
        #expect(pool.connectionFailed(c(0)) == [.failRequest(r(1), .connectFailed), .createConnection(c(1))])
        #expect(pool.connectionFailed(c(1)) == [.failRequest(r(2), .connectFailed)])
        #expect(pool.connectionCount == 0)
    }

    @Test func closeWhileConnectingCountsAsAFailedConnect() {
        var pool = Machine(maxConnections: 1, idleTimeout: .seconds(60))
        _ = pool.requestArrived(r(1), now: t0)
        _ = pool.requestArrived(r(2), now: t0)
        // The stream closed before the shell reported the connect: the oldest waiter fails, and
        // the freed slot opens a connection for the next.
        #expect(pool.connectionClosed(c(0)) == [.failRequest(r(1), .connectFailed), .createConnection(c(1))])
        #expect(pool.connectionCount == 1)
        // The shell's own report for it comes later: established is closed, failed changes nothing.
        #expect(pool.connectionEstablished(c(0), now: t0) == [.closeConnection(c(0))])
        #expect(pool.connectionFailed(c(0)) == [])
        #expect(pool.connectionEstablished(c(1), now: t0) == [.lease(c(1), to: r(2), pipelined: false)])
        #expect(pool.connectionCount == 1)
        #expect(pool.waiterCount == 0)
    }

    @Test func closeWhileConnectingWithoutWaitersOrAfterShutdownOpensNothing() {
        var pool = Machine(maxConnections: 2, idleTimeout: .seconds(60))
        _ = pool.requestArrived(r(1), now: t0)
        _ = pool.requestCancelled(r(1))
        #expect(pool.connectionClosed(c(0)) == [])
        #expect(pool.connectionCount == 0)
        _ = pool.requestArrived(r(2), now: t0)
        #expect(pool.shutDown() == [.failRequest(r(2), .shutDown)])
        #expect(pool.connectionClosed(c(1)) == [])
        #expect(pool.connectionFailed(c(1)) == [])
        #expect(pool.connectionCount == 0)
        // The connecting count went back to zero: a closed connect leaves no phantom behind.
        var fresh = Machine(maxConnections: 1, idleTimeout: .seconds(60))
        _ = fresh.requestArrived(r(1), now: t0)
        _ = fresh.connectionClosed(c(0))
        #expect(fresh.requestArrived(r(2), now: t0) == [.createConnection(c(1))])
    }

    @Test func lateReportsForAConnectionAlreadyGoneAreIgnored() {
        var pool = Machine(maxConnections: 1, idleTimeout: .seconds(60))
        _ = pool.requestArrived(r(1), now: t0)
        #expect(pool.connectionFailed(c(0)) == [.failRequest(r(1), .connectFailed)])
        #expect(pool.connectionClosed(c(0)) == [])
        #expect(pool.connectionReleased(c(0), reusable: true, now: t0) == [])
        #expect(pool.idleTimeoutFired(c(0), now: t0 + .seconds(120)) == [])
        #expect(pool.connectionCount == 0)
    }

    @Test func serverClosingAnIdleConnectionRemovesIt() {
        var pool = Machine(maxConnections: 2, idleTimeout: .seconds(60))
        _ = pool.requestArrived(r(1), now: t0)
        _ = pool.connectionEstablished(c(0), now: t0)
        _ = pool.connectionReleased(c(0), reusable: true, now: t0)
        #expect(pool.connectionClosed(c(0)) == [.cancelIdleTimeout(c(0))])
        #expect(pool.idleCount == 0)
        #expect(pool.requestArrived(r(2), now: t0) == [.createConnection(c(1))])
    }

    @Test func idleTimeoutClosesOnlyConnectionsIdleLongEnough() {
        var pool = Machine(maxConnections: 2, idleTimeout: .seconds(60))
        _ = pool.requestArrived(r(1), now: t0)
        _ = pool.connectionEstablished(c(0), now: t0)
        _ = pool.connectionReleased(c(0), reusable: true, now: t0)
        // Reused and re-parked at t0+30: the first timer (due t0+60) must not close it.
        let t30 = t0 + .seconds(30)
        _ = pool.requestArrived(r(2), now: t30)
        _ = pool.connectionReleased(c(0), reusable: true, now: t30)
        #expect(pool.idleTimeoutFired(c(0), now: t0 + .seconds(60)) == [])
        #expect(pool.idleTimeoutFired(c(0), now: t30 + .seconds(60)) == [.closeConnection(c(0))])
        #expect(pool.connectionCount == 0)
    }

    @Test func shutDownClosesIdleFailsWaitersAndClosesLeasedOnRelease() {
        var pool = Machine(maxConnections: 2, idleTimeout: .seconds(60))
        _ = pool.requestArrived(r(1), now: t0)
        _ = pool.requestArrived(r(2), now: t0)
        _ = pool.connectionEstablished(c(0), now: t0)
        _ = pool.connectionEstablished(c(1), now: t0)
        _ = pool.connectionReleased(c(1), reusable: true, now: t0)
        _ = pool.requestArrived(r(3), now: t0)  // takes c1
        _ = pool.connectionReleased(c(1), reusable: true, now: t0)
        _ = pool.requestArrived(r(4), now: t0)  // takes c1 again
        _ = pool.requestArrived(r(5), now: t0)  // waits (limit 2)
        #expect(pool.shutDown() == [.failRequest(r(5), .shutDown)])
        #expect(pool.connectionReleased(c(0), reusable: true, now: t0) == [.closeConnection(c(0))])
        #expect(pool.requestArrived(r(6), now: t0) == [.failRequest(r(6), .shutDown)])
    }

    // MARK: Pipelining

    @Test func pipelinableRequestsShareConnectionsOnlyOnceTheLimitIsReached() {
        var pool = Machine(maxConnections: 2, idleTimeout: .seconds(60), maxPipelined: 3)
        #expect(pool.requestArrived(r(1), pipelinable: true, now: t0) == [.createConnection(c(0))])
        #expect(pool.connectionEstablished(c(0), now: t0) == [.lease(c(0), to: r(1), pipelined: false)])
        // Room for a second connection: open it rather than pipeline.
        #expect(pool.requestArrived(r(2), pipelinable: true, now: t0) == [.createConnection(c(1))])
        #expect(pool.connectionEstablished(c(1), now: t0) == [.lease(c(1), to: r(2), pipelined: false)])
        // At the limit: join the least-loaded connection, alternating, up to three in flight each.
        #expect(pool.requestArrived(r(3), pipelinable: true, now: t0) == [.lease(c(0), to: r(3), pipelined: true)])
        #expect(pool.requestArrived(r(4), pipelinable: true, now: t0) == [.lease(c(1), to: r(4), pipelined: true)])
        #expect(pool.requestArrived(r(5), pipelinable: true, now: t0) == [.lease(c(0), to: r(5), pipelined: true)])
        #expect(pool.requestArrived(r(6), pipelinable: true, now: t0) == [.lease(c(1), to: r(6), pipelined: true)])
        // Both full: wait, and take the first slot that opens.
        #expect(pool.requestArrived(r(7), pipelinable: true, now: t0) == [])
        #expect(pool.waiterCount == 1)
        #expect(pool.connectionReleased(c(1), reusable: true, now: t0) == [.lease(c(1), to: r(7), pipelined: true)])
        #expect(pool.waiterCount == 0)
    }

    @Test func aNonPipelinableRequestNeverJoinsNorIsJoined() {
        var pool = Machine(maxConnections: 1, idleTimeout: .seconds(60), maxPipelined: 4)
        #expect(pool.requestArrived(r(1), pipelinable: false, now: t0) == [.createConnection(c(0))])
        #expect(pool.connectionEstablished(c(0), now: t0) == [.lease(c(0), to: r(1), pipelined: false)])
        // r(1) may be streaming a body: nobody joins it.
        #expect(pool.requestArrived(r(2), pipelinable: true, now: t0) == [])
        #expect(pool.requestArrived(r(3), pipelinable: false, now: t0) == [])
        // Freed: the oldest waiter (pipelinable) gets it, and the non-pipelinable r(3) is not added behind it.
        #expect(pool.connectionReleased(c(0), reusable: true, now: t0) == [.lease(c(0), to: r(2), pipelined: false)])
        #expect(pool.waiterCount == 1)
        #expect(pool.connectionReleased(c(0), reusable: true, now: t0) == [.lease(c(0), to: r(3), pipelined: false)])
    }

    @Test func aFreedConnectionTakesAsManyPipelinableWaitersAsItsDepthAllows() {
        var pool = Machine(maxConnections: 1, idleTimeout: .seconds(60), maxPipelined: 3)
        #expect(pool.requestArrived(r(1), pipelinable: true, now: t0) == [.createConnection(c(0))])
        #expect(pool.requestArrived(r(2), pipelinable: true, now: t0) == [])
        #expect(pool.requestArrived(r(3), pipelinable: false, now: t0) == [])
        #expect(pool.requestArrived(r(4), pipelinable: true, now: t0) == [])
        #expect(pool.requestArrived(r(5), pipelinable: true, now: t0) == [])
        #expect(
            pool.connectionEstablished(c(0), now: t0) == [
                .lease(c(0), to: r(1), pipelined: false), .lease(c(0), to: r(2), pipelined: true),
                .lease(c(0), to: r(4), pipelined: true),
            ])
        #expect(pool.waiterCount == 2)
    }

    @Test func anUnreusableReleaseDropsTheConnectionAndIgnoresTheRequestsPipelinedBehindIt() {
        var pool = Machine(maxConnections: 1, idleTimeout: .seconds(60), maxPipelined: 3)
        #expect(pool.requestArrived(r(1), pipelinable: true, now: t0) == [.createConnection(c(0))])
        _ = pool.connectionEstablished(c(0), now: t0)
        #expect(pool.requestArrived(r(2), pipelinable: true, now: t0) == [.lease(c(0), to: r(2), pipelined: true)])
        #expect(pool.requestArrived(r(3), pipelinable: true, now: t0) == [.lease(c(0), to: r(3), pipelined: true)])
        #expect(pool.requestArrived(r(4), pipelinable: true, now: t0) == [])
        // The server answered r(1) with Connection: close: the connection goes, a new one opens for r(4).
        #expect(pool.connectionReleased(c(0), reusable: false, now: t0) == [.closeConnection(c(0)), .createConnection(c(1))])
        // r(2) and r(3) fail with it (and are retried by the client); their releases change nothing.
        #expect(pool.connectionReleased(c(0), reusable: false, now: t0) == [])
        #expect(pool.connectionReleased(c(0), reusable: false, now: t0) == [])
        #expect(pool.connectionCount == 1)
    }

    @Test func withoutPipeliningPipelinableRequestsWait() {
        var pool = Machine(maxConnections: 1, idleTimeout: .seconds(60))
        #expect(pool.requestArrived(r(1), pipelinable: true, now: t0) == [.createConnection(c(0))])
        #expect(pool.connectionEstablished(c(0), now: t0) == [.lease(c(0), to: r(1), pipelined: false)])
        #expect(pool.requestArrived(r(2), pipelinable: true, now: t0) == [])
        #expect(pool.connectionReleased(c(0), reusable: true, now: t0) == [.lease(c(0), to: r(2), pipelined: false)])
    }
}
