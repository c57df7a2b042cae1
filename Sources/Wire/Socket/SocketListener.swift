import Glibc

/// A listening socket on one loop that accepts connections and hands each to `onAccept`.
///
/// For a server on several loops, each loop gets its own listener on the same port with
/// `SO_REUSEPORT`, and the kernel spreads connections over them: no acceptor thread, no hand-off.
package final class SocketListener: Selectable {
    package let eventLoop: EventLoop
    package let localAddress: SocketAddress
    private let socket: Socket
    private var registrationKey: UInt64 = 0
    private var isClosed = false
    private var resumeTimer: TimerQueue<() -> Void>.ID?
    private let onAccept: (AcceptedConnection) -> Void
    private let onClose: () -> Void

    /// The local address of every connection accepted, when the listener is bound to one address (not the wildcard,
    /// where each connection's is its own): no getsockname(2) per connection.
    private let acceptedLocalAddress: SocketAddress?
    /// How long to stop accepting after running out of descriptors (EMFILE/ENFILE), instead of
    /// spinning on a listener that stays readable.
    static let descriptorExhaustionPause = Duration.milliseconds(100)

    /// Binds, listens and starts accepting on `loop`; loop thread only.
    package init(
        bindingTo address: SocketAddress,
        backlog: Int = 1024,
        reusePort: Bool = false,
        on loop: EventLoop,
        onAccept: @escaping (AcceptedConnection) -> Void,
        onClose: @escaping () -> Void = {}
    ) throws(IOError) {
        loop.preconditionInEventLoop()
        self.eventLoop = loop
        self.onAccept = onAccept
        self.onClose = onClose
        socket = try Socket.makeStream(family: address.family)
        if address.family != .unix {
            try socket.setOption(.reuseAddress(true))
            if reusePort { try socket.setOption(.reusePort(true)) }
        }
        try socket.bind(to: address)
        try socket.listen(backlog: backlog)
        localAddress = try socket.localAddress()
        acceptedLocalAddress = localAddress.isUnspecified ? nil : localAddress
        registrationKey = try loop.register(socket.rawDescriptor, interest: .read, handler: self)
    }

    /// Accepts one connection per readiness event, as nginx does without `multi_accept`: the listener is
    /// level-triggered, so one still waiting makes the next wait return at once (with whatever else is ready), and
    /// a lone connection costs no second accept4(2) that finds the queue empty.
    package func ready(_ event: ReadinessEvent) {
        guard !isClosed else { return }
        do {
            guard let accepted = try socket.accept(localAddress: acceptedLocalAddress) else { return }
            onAccept(accepted)
        } catch let error where error.errno.rawValue == EMFILE || error.errno.rawValue == ENFILE {
            pauseAccepting()
        } catch {
            // ECONNABORTED and friends concern one would-be connection, not the listener.
        }
    }

    private func pauseAccepting() {
        guard resumeTimer == nil, !isClosed else { return }
        try? eventLoop.reregister(socket.rawDescriptor, key: registrationKey, interest: .none)
        resumeTimer = eventLoop.scheduleOnLoop(at: .after(Self.descriptorExhaustionPause)) { [weak self] in
            guard let self, !self.isClosed else { return }
            self.resumeTimer = nil
            try? self.eventLoop.reregister(self.socket.rawDescriptor, key: self.registrationKey, interest: .read)
        }
    }

    package func eventLoopIsClosing() { close() }

    /// Stops accepting and closes the listening socket; connections already accepted live on.
    package func close() {
        eventLoop.preconditionInEventLoop()
        guard !isClosed else { return }
        isClosed = true
        if let resumeTimer { eventLoop.cancelOnLoop(resumeTimer) }
        eventLoop.deregister(socket.rawDescriptor, key: registrationKey)
        try? socket.close()
        if case .unix(let path) = localAddress.storage { unlink(path) }
        onClose()
    }
}
