import Synchronization
@_spi(Locking) import Wire

/// Hears the kernel's routing notifications on a Wire event loop and reports "changed", at most once per
/// `coalescing` interval after the first message of a burst. A lost notification (`ENOBUFS`, `NLMSG_OVERRUN`) or
/// a message that does not parse is reported as a change too: the next snapshot is a full dump either way.
///
/// Every `Selectable` call comes on the loop; `stop()` may come from any thread and hands the close to the loop,
/// which closes the descriptor exactly once (or the loop does, when it shuts down first).
final class NetlinkChangeMonitor: Selectable, Sendable {
    private struct State: ~Copyable {
        var socket: RouteNetlinkSocket
        var key: UInt64?
        var timer: Scheduled?
        var isStopped = false
    }

    private let state: Lock<State>
    private let loop: EventLoop
    private let coalescing: Duration
    private let onChange: @Sendable () -> Void

    /// Opens the socket on the calling thread (its network namespace) and registers it on `loop`.
    init(loop: EventLoop, coalescing: Duration, onChange: @escaping @Sendable () -> Void) throws(IOError) {
        // A larger receive buffer than the default makes ENOBUFS rarer when many routes change at once.
        let socket = try RouteNetlinkSocket(groups: RouteNetlinkSocket.reachabilityGroups, receiveBufferSize: 1 << 20)
        state = Lock(State(socket: socket))
        self.loop = loop
        self.coalescing = coalescing
        self.onChange = onChange
        loop.execute { self.register() }
    }

    private func register() {
        state.withLock { state in
            guard !state.isStopped, state.socket.isOpen else { return }
            do {
                state.key = try loop.register(state.socket.rawValue, interest: .read, handler: self)
            } catch {
                // Unwatchable: close now; the manager keeps its first snapshot (no change will be heard).
                try? state.socket.close()
            }
        }
    }

    func ready(_ event: ReadinessEvent) {
        var changed = false
        var failed = false
        state.withLock { state in
            guard state.socket.isOpen else { return }
            // Drain what is queued; the loop is level-triggered, so a bounded drain loses nothing.
            for _ in 0..<64 {
                do throws(IOError) {
                    guard case .processed(let datagram) = try state.socket.receive() else { break }
                    if Self.isRelevant(datagram) { changed = true }
                } catch let error where error.isNetlinkOverflow {
                    changed = true  // the kernel dropped notifications: dump everything again
                } catch {
                    failed = true
                    break
                }
            }
            if failed { close(&state) }
            if changed || failed, state.timer == nil, !state.isStopped {
                state.timer = loop.schedule(in: coalescing) { [weak self] in self?.fire() }
            }
        }
    }

    /// Whether the datagram is worth a new snapshot: any link, address or route message, a lost message, or
    /// bytes that do not parse (better one needless dump than a missed change).
    static func isRelevant(_ datagram: [UInt8]) -> Bool {
        guard let messages = try? RouteNetlinkParser.messages(in: datagram) else { return true }
        return messages.contains { message in
            switch message.payload {
            case .link, .address, .route, .overrun: true
            case .done, .error, .other: false
            }
        }
    }

    private func fire() {
        let stopped = state.withLock { state in
            state.timer = nil
            return state.isStopped
        }
        if !stopped { onChange() }
    }

    func eventLoopIsClosing() {
        state.withLock { close(&$0) }
    }

    /// Stops reporting and closes the socket on the loop.
    func stop() {
        let alreadyStopped = state.withLock { state in
            defer { state.isStopped = true }
            state.timer?.cancel()
            state.timer = nil
            return state.isStopped
        }
        guard !alreadyStopped else { return }
        // Deregistration must happen on the loop; if the loop is gone, it closed the socket already.
        loop.execute { self.state.withLock { self.close(&$0) } }
    }

    private func close(_ state: inout State) {
        guard state.socket.isOpen else { return }
        if let key = state.key { loop.deregister(state.socket.rawValue, key: key) }
        state.key = nil
        try? state.socket.close()
    }
}
