import ArgumentParser
import Glibc
import Wire
import WireTLS

/// `wire replay FILE --as-server | --as-client TARGET`: plays one side of a recording against a live peer.
///
/// ```
/// wire replay session.jsonl --as-server --port 8080 --speed 10
/// wire replay session.jsonl --as-client http://127.0.0.1:8080
/// ```
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a recording: answer clients with its server bytes, or send its client bytes to a server.",
        discussion: """
            Each recorded write is one write, sent once the live peer has sent as many HTTP messages (heads and ends) \
            as the recorded peer had before it (bytes, for a peer whose recorded bytes are no HTTP), after the \
            recorded pause divided by --speed.

            --as-server prints `listening on http://HOST:PORT` first, then one JSON line per connection played; \
            the Nth connection accepted plays the Nth recorded one (round again after the last). It serves until \
            SIGINT or SIGTERM.

            --as-client plays each recorded connection in turn on a connection of its own and prints, per response, \
            whether it is byte for byte the recorded one and, if not, the first differing byte's offset, the status \
            and the fields that differ; then a line per connection. Exit status 0 when every answer is the \
            recorded one, 1 when one differs, 7 when it cannot connect, 26 when the recording cannot be read.
            """
    )

    @Argument(help: "The recording (wire get --record, or one file of wire serve --record).")
    var file: String

    @Flag(help: "Listen and answer clients with the recorded server side.")
    var asServer = false

    @Option(help: "Send the recorded client side to this server (http://HOST:PORT, https://HOST:PORT or HOST:PORT).")
    var asClient: String?

    @Option(help: "With --as-server: the address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "With --as-server: the port; 0 picks a free one.")
    var port = 8080

    @Option(help: "Play the recorded pauses this many times faster (0.5: twice as slow).")
    var speed = 1.0

    @Option(help: "Play only this recorded connection (its conn number).")
    var connection: Int?

    @Option(help: "End a connection when the peer sends nothing for this many seconds while it is waited for.")
    var idleTimeout = 5.0

    @Option(help: "With --as-server: serve HTTPS with this PEM certificate chain; needs --tls-key.")
    var tlsCert: String?

    @Option(help: "With --as-server: the PEM private key of --tls-cert.")
    var tlsKey: String?

    @Flag(name: [.customShort("k"), .long], help: "With --as-client to https: verify nothing of the server's certificate.")
    var insecure = false

    @Option(help: "With --as-client to https: trust the CA certificates of this PEM file.")
    var cacert: String?

    func validate() throws {
        guard asServer != (asClient != nil) else { throw ValidationError("choose one of --as-server and --as-client TARGET") }
        guard speed > 0, speed.isFinite else { throw ValidationError("--speed must be a positive number") }
        guard idleTimeout > 0, idleTimeout.isFinite else { throw ValidationError("--idle-timeout must be positive") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        if tlsCert != nil && !asServer { throw ValidationError("--tls-cert goes with --as-server") }
        if (insecure || cacert != nil) && asClient == nil { throw ValidationError("-k and --cacert go with --as-client") }
    }

    func run() async throws {
        let recording: Recording
        do { recording = try Recording.read(file) } catch {
            StandardStreams.error("wire: (\(ExitStatus.readError)) \(file): \(error)\n")
            throw ExitCode(ExitStatus.readError)
        }
        let connections = recording.connections.filter { connection == nil || $0.number == connection }
        guard !connections.isEmpty else {
            throw ValidationError(connection.map { "the recording has no connection \($0)" } ?? "the recording has no bytes")
        }
        signal(SIGPIPE, SIG_IGN)
        let idle = Duration.nanoseconds(Int64(idleTimeout * 1e9))
        if let asClient {
            let status = await playClient(connections, target: asClient, idle: idle)
            if status != ExitStatus.success { throw ExitCode(status) }
        } else {
            try await playServer(connections, idle: idle)
        }
    }

    private func playServer(_ connections: [Recording.Connection], idle: Duration) async throws {
        let signals = SignalWaiter(signals: [SIGINT, SIGTERM])
        let address = try SocketAddress(ipAddress: host == "localhost" ? "127.0.0.1" : host, port: port)
        var security: (any ServerTransportSecurity)?
        if let tlsCert, let tlsKey {
            var configuration = HTTPServerConfiguration(address: address)
            configuration.tls = TLSServerConfiguration(certificateChainFile: tlsCert, privateKeyFile: tlsKey)
            security = configuration.transportSecurity
            try security?.prepare()
        }
        let tls = security
        let scripts = connections.map { (number: $0.number, script: ReplayScript($0, playing: .server, speed: speed)) }
        let loop = try EventLoop(name: "wire-replay")
        let server: LoopBound<ReplayServer>
        let bound: SocketAddress
        do {
            (server, bound) = try await loop.submit { () throws -> (LoopBound<ReplayServer>, SocketAddress) in
                let server = ReplayServer(loop: loop, scripts: scripts, security: tls, idleTimeout: idle)
                return (LoopBound(server, loop: loop), try server.listen(on: address))
            }
        } catch {
            await loop.shutdownGracefully()
            throw error
        }
        let hostText = bound.family == .ipv6 ? "[\(bound.host)]" : bound.host
        StandardStreams.output("listening on \(tlsCert == nil ? "http" : "https")://\(hostText):\(bound.port ?? port)\n")
        let signal = await signals.next()
        StandardStreams.error("wire replay: signal \(signal), stopping\n")
        try? await loop.submit { server.value.close() }
        await loop.shutdownGracefully()
    }

    /// Each connection in turn against `target`; the exit status.
    private func playClient(_ connections: [Recording.Connection], target text: String, idle: Duration) async -> Int32 {
        let url = text.contains("://") ? text : "http://" + text
        var words = ["--raw", "-", "--connect-timeout", "10"]
        if insecure { words.append("-k") }
        if let cacert { words += ["--cacert", cacert] }
        words.append(url)
        let options: RawRequestOptions
        let target: RawRequestOptions.Target
        do {
            options = try RawRequestOptions(words)
            target = try options.target()
        } catch {
            StandardStreams.error("wire: (\(ExitStatus.usage)) --as-client: \(error.message)\n")
            return ExitStatus.usage
        }
        let loop: EventLoop
        do { loop = try EventLoop(name: "wire-replay") } catch {
            StandardStreams.error("wire: cannot start an event loop: \(error)\n")
            return ExitStatus.generic
        }
        defer { loop.shutdown() }
        var comparison = ReplayComparison()
        var output = JSONLineWriter()
        for connection in connections {
            let streams: RawRequest.Streams
            switch await RawRequest.connect(options, target: target, on: loop) {
            case .failure(let failure):
                output.flush()
                StandardStreams.error("wire: (\(failure.status)) \(failure.message)\n")
                return failure.status
            case .success(let connected):
                streams = connected
            }
            let script = ReplayScript(connection, playing: .client, speed: speed)
            let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<ReplayPlayer.Outcome, Never>) in
                loop.execute(
                    {
                        let player = ReplayPlayer(
                            stream: streams.stream.value, script: script, idleTimeout: idle, endsWhenAnswered: true
                        ) { continuation.resume(returning: $0) }
                        player.start()
                    },
                    ifClosed: {
                        continuation.resume(returning: ReplayPlayer.Outcome(end: .failed("the event loop closed")))
                    })
            }
            comparison.compare(outcome, with: connection, into: &output)
        }
        output.flush()
        return comparison.differences == 0 ? ExitStatus.success : ExitStatus.generic
    }
}
