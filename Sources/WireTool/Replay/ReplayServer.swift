import Wire

/// `wire replay FILE --as-server`: listens and answers each connection with the server side of a recorded
/// connection (the first accepted plays the first recorded, and so on, round again after the last), as
/// `ReplayPlayer` plays it; one JSON line per connection played when it ends. One loop; everything lives on it.
final class ReplayServer {
    private let loop: EventLoop
    private let scripts: [(number: Int, script: ReplayScript)]
    private let security: (any ServerTransportSecurity)?
    private let idleTimeout: Duration
    private var listener: SocketListener?
    private var players: [ObjectIdentifier: ReplayPlayer] = [:]
    private var accepted = 0
    private var output = JSONLineWriter()

    init(
        loop: EventLoop, scripts: [(number: Int, script: ReplayScript)], security: (any ServerTransportSecurity)?,
        idleTimeout: Duration
    ) {
        self.loop = loop
        self.scripts = scripts
        self.security = security
        self.idleTimeout = idleTimeout
    }

    /// Listens on `address`; returns where.
    func listen(on address: SocketAddress) throws(IOError) -> SocketAddress {
        let listener = try SocketListener(bindingTo: address, on: loop, onAccept: { [weak self] in self?.accept($0) })
        self.listener = listener
        return listener.localAddress
    }

    private func accept(_ connection: AcceptedConnection) {
        let socket = connection.socket
        guard let plain = try? SocketStream(accepted: connection, on: loop) else {
            try? socket.close()
            return
        }
        var stream: any ByteStream = plain
        if let security {
            do { stream = try security.wrap(plain, handshakeTimeout: .seconds(10)) } catch {
                plain.close(error: error)
                return
            }
        }
        let index = accepted
        accepted += 1
        let (number, script) = scripts[index % scripts.count]
        var key: ObjectIdentifier?
        let player = ReplayPlayer(stream: stream, script: script, idleTimeout: idleTimeout, endsWhenAnswered: false) {
            [weak self] outcome in
            guard let self else { return }
            if let key { players.removeValue(forKey: key) }
            report(index: index, recorded: number, outcome)
        }
        key = ObjectIdentifier(player)
        players[ObjectIdentifier(player)] = player
        player.start()
    }

    /// `{"connection": I, "recorded_conn": N, "end": END, "sent", "writes", "received", "reads"}`.
    private func report(index: Int, recorded: Int, _ outcome: ReplayPlayer.Outcome) {
        output.beginObject()
        output.key("connection")
        output.integer(index)
        output.key("recorded_conn")
        output.integer(recorded)
        output.key("end")
        output.string(outcome.end.name)
        output.key("sent")
        output.integer(outcome.sent)
        output.key("writes")
        output.integer(outcome.writes)
        output.key("received")
        output.integer(outcome.received.count)
        output.key("reads")
        output.integer(outcome.reads)
        output.endObject()
        output.flush()
    }

    /// Stops listening and closes every connection.
    func close() {
        listener?.close()
        listener = nil
        for player in Array(players.values) { player.stop() }
    }
}
