import Synchronization
import Testing
import WireTestSupport
@_spi(Locking) import Wire

extension IOSuite {
    /// A connect whose loop shuts down under it ends with `.eventLoopClosed`, whatever it was waiting for.
    @Suite struct ConnectorLoopShutdownTests {
        /// A resolver that answers only when the test says so and ignores cancellation: the worst a custom
        /// resolver can do.
        final class GatedResolver: Resolver {
            private let pending = Lock<[CheckedContinuation<Void, Never>]>([])
            let asked = AsyncStreamBox<Void>()

            func resolve(host: String, port: Int) async throws -> [SocketAddress] {
                await withCheckedContinuation { continuation in
                    pending.withLock { $0.append(continuation) }
                    asked.yield(())
                }
                throw NameResolutionError.unknownHost(host)
            }

            /// Lets every waiting lookup return (so no task is left behind).
            func open() {
                let waiting = pending.withLock { pending in
                    defer { pending = [] }
                    return pending
                }
                for continuation in waiting { continuation.resume() }
            }
        }

        @Test func aConnectWaitingForTheResolverFailsWhenItsLoopShutsDown() async throws {
            let loop = try EventLoop(name: "resolving")
            let resolver = GatedResolver()
            let connect = Task {
                try await Connector.connect(host: "never.invalid", port: 80, on: loop, resolver: resolver, timeout: .seconds(60))
            }
            try await resolver.asked.next()
            await loop.shutdownGracefully()
            let error = try await withTimeout(seconds: 5) { () async -> ConnectError? in
                do { _ = try await connect.value; return nil } catch { return error as? ConnectError }
            }
            resolver.open()
            #expect(error?.reason == .eventLoopClosed)
            #expect(error?.loopName == "resolving")
            #expect(error?.description == "connection to never.invalid port 80 abandoned: event loop resolving shut down")
        }

        @Test func aResolverThatNeverAnswersTimesOutAtTheConnectDeadline() async throws {
            let resolver = GatedResolver()
            try await withLoop { loop in
                let error = try await withTimeout(seconds: 5) { () async -> ConnectError? in
                    do {
                        _ = try await Connector.connect(
                            host: "never.invalid", port: 80, on: loop, resolver: resolver, timeout: .milliseconds(200))
                        return nil
                    } catch { return error as? ConnectError }
                }
                #expect(error?.reason == .timedOut)
            }
            resolver.open()
        }

        @Test func aConnectToAnAddressThatDoesNotAnswerFailsWhenItsLoopShutsDown() async throws {
            let stalled = try ConnectorTests.StalledListener(host: "127.0.0.1")
            defer { stalled.close() }
            let loop = try EventLoop(name: "connecting")
            let port = stalled.address.port!
            let connect = Task {
                try await Connector.connect(host: "127.0.0.1", port: port, on: loop, timeout: .seconds(60))
            }
            // The attempt is registered with the loop while its SYN goes unanswered.
            let attempting = try await eventually { try await loop.submit { loop.registrationCount } == 1 }
            #expect(attempting)
            await loop.shutdownGracefully()
            let error = try await withTimeout(seconds: 5) { () async -> ConnectError? in
                do { _ = try await connect.value; return nil } catch { return error as? ConnectError }
            }
            #expect(error?.reason == .eventLoopClosed)
        }

        @Test func aConnectOnALoopAlreadyShutDownFailsAtOnce() async throws {
            let loop = try EventLoop(name: "closed")
            loop.shutdown()
            let address = try SocketAddress(ipAddress: "127.0.0.1", port: 9)
            let error = try await withTimeout(seconds: 5) { () async -> ConnectError? in
                do {
                    _ = try await Connector.connect(
                        to: [address], host: "127.0.0.1", port: 9, on: loop,
                        deadline: .after(.seconds(5)), timeout: .seconds(5))
                    return nil
                } catch { return error as? ConnectError }
            }
            #expect(error?.reason == .eventLoopClosed)
            let submitted = try await withTimeout(seconds: 5) { () async -> (any Error)? in
                do { try await loop.submit {}; return nil } catch { return error }
            }
            #expect(submitted is EventLoopClosedError, "submit on a closed loop throws instead of waiting forever")
        }
    }
}
