import Testing
import Wire
import WireTestSupport

/// A new connection whose stream closes between the connect (and handshake) and the pool taking
/// it: the pool must never crash, and the request must fail with the error that closed it.
///
/// A stand-in security layer (the pool's hook for TLS) has the peer reset the connection once
/// it is connected, waits (event-driven) until the client socket has seen the reset, then hands the pool a
/// stream that holds that close the way `TLSStream` holds an alert or truncation it has not
/// decrypted yet: still open, delivered on the loop right after the HTTP connection attaches.
extension IOSuite {
    @Suite(.exclusiveIO) struct ConnectionPoolConnectRaceTests {
        /// Whether the stand-in stream reports the held close as soon as the lower stream closed
        /// (`isOpen` false before anyone attached), or only once the HTTP connection attaches.
        enum Timing: Sendable, CaseIterable {
            case beforeAttach
            case afterAttach
        }

        @Test(arguments: Timing.allCases)
        func resetBetweenConnectAndPoolFailsTheRequestWithTheReset(_ timing: Timing) async throws {
            let before = await descriptorBaseline()
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "pool-race")
            let loop = group.next()
            let peer = try await loop.submit { LoopBound(try ResetOnDemandPeer(on: loop), loop: loop) }
            let port = try await loop.submit { peer.value.listener.localAddress.port! }
            var configuration = HTTPClientConfiguration()
            configuration.transportSecurity = HeldCloseSecurity(timing: timing, peer: peer)
            configuration.maxConnectionsPerHost = 1
            let client = try HTTPClient(configuration: configuration, group: group)
            // Several rounds: before the fix one crashed the process.
            for _ in 0..<20 {
                do {
                    _ = try await withTimeout(seconds: 10) {
                        try await client.execute(HTTPClientRequest(url: "https://127.0.0.1:\(port)/"))
                    }
                    Issue.record("a request over a reset connection succeeded")
                } catch let error as HTTPClientError {
                    #expect(error.code == .connectionReset, "\(error)")
                    #expect(error.ioError?.errno == .connectionReset, "\(error)")
                }
            }
            await client.shutdown()
            try await loop.submit { peer.value.listener.close() }
            await group.shutdownGracefully()
            #expect(before.newlyOpened() == [])
        }
    }
}

/// Accepts connections and holds them until asked to reset one (the connect itself must succeed).
private final class ResetOnDemandPeer {
    let listener: SocketListener
    private var accepted: [Socket] = []
    private var resetsOwed = 0

    init(on loop: EventLoop) throws {
        var onAccept: ((Socket) -> Void)?
        listener = try SocketListener(
            bindingTo: try SocketAddress(ipAddress: "127.0.0.1", port: 0), on: loop,
            onAccept: { connection in onAccept?(connection.socket) })
        onAccept = { [unowned self] socket in
            accepted.append(socket)
            settle()
        }
    }

    /// Resets the oldest connection held, or the next one accepted.
    func resetOne() {
        resetsOwed += 1
        settle()
    }

    private func settle() {
        while resetsOwed > 0, !accepted.isEmpty {
            resetsOwed -= 1
            let socket = accepted.removeFirst()
            try? socket.setOption(.linger(seconds: 0))
            try? socket.close()
        }
    }
}

/// The stand-in security layer: has the peer reset the connection, and returns a
/// `HeldCloseStream` once the connected socket has seen it.
private final class HeldCloseSecurity: ClientTransportSecurity {
    let timing: IOSuite.ConnectionPoolConnectRaceTests.Timing
    let peer: LoopBound<ResetOnDemandPeer>
    var poolKey: String { "held-close" }

    init(timing: IOSuite.ConnectionPoolConnectRaceTests.Timing, peer: LoopBound<ResetOnDemandPeer>) {
        self.timing = timing
        self.peer = peer
    }

    func secure(_ stream: LoopBound<any ByteStream>, host: String, port: Int, deadline: Deadline) async throws
        -> LoopBound<any ByteStream>
    {
        let loop = stream.loop
        let timing = timing
        let peer = peer
        return try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<LoopBound<any ByteStream>, any Error>) in
            loop.execute {
                let held = HeldCloseStream(lower: stream.value, timing: timing)
                held.start { continuation.resume(returning: LoopBound(held, loop: loop)) }
                peer.value.resetOne()
            }
        }
    }
}

/// Wraps a stream, keeps its close while nobody listens, and delivers it on the loop just after
/// a delegate attaches (as `TLSStream` schedules its reading then). Loop-confined.
private final class HeldCloseStream: ByteStream, ByteStreamDelegate {
    let lower: any ByteStream
    let timing: IOSuite.ConnectionPoolConnectRaceTests.Timing
    private var onLowerClosed: (() -> Void)?
    private var held: (any Error)?
    private var lowerClosed = false
    private var delivered = false

    weak var delegate: (any ByteStreamDelegate)? {
        didSet {
            guard delegate != nil, lowerClosed, !delivered else { return }
            eventLoop.executeSoon { [self] in deliverClose() }
        }
    }

    init(lower: any ByteStream, timing: IOSuite.ConnectionPoolConnectRaceTests.Timing) {
        self.lower = lower
        self.timing = timing
    }

    /// Listens to the lower stream; `onLowerClosed` runs once it has closed (perhaps already).
    func start(onLowerClosed: @escaping () -> Void) {
        self.onLowerClosed = onLowerClosed
        lower.delegate = self
        if !lower.isOpen { stream(lower, didCloseWith: lower.closeError) }
    }

    var eventLoop: EventLoop { lower.eventLoop }
    var pendingWriteBytes: Int { 0 }
    var drainedWriteBytes: UInt64 { 0 }
    var isOpen: Bool { timing == .beforeAttach ? !lowerClosed : !delivered }
    var closeError: (any Error)? { isOpen ? nil : held }
    var localAddress: SocketAddress? { lower.localAddress }
    var remoteAddress: SocketAddress? { lower.remoteAddress }

    func write(_ buffers: [ByteBuffer]) {}
    func setReadingEnabled(_ enabled: Bool) {}
    func shutdownWrite() {}
    func close(error: (any Error)?) {
        guard !delivered else { return }
        if !lowerClosed { lower.close(error: nil) }
        deliverClose()
    }

    private func deliverClose() {
        guard !delivered else { return }
        delivered = true
        let delegate = self.delegate
        self.delegate = nil
        delegate?.stream(self, didCloseWith: held)
    }

    func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
    }
    func streamDidReachEnd(_ stream: any ByteStream) {}
    func streamDidDrainWrites(_ stream: any ByteStream) {}
    func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
        lowerClosed = true
        held = error
        let resume = onLowerClosed
        onLowerClosed = nil
        resume?()
    }
}
