import ArgumentParser
import Glibc
import Wire
import WireFaults
import WireTLS

/// `wire serve`: an HTTP/1.1 server with one of three behaviours: static files, echo, or a fixed greeting.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: """
            Serve HTTP/1.1: static files (--root), an echo of each request (--echo), Hello, World! (--hello), or a \
            hostile server playing a fault scenario (--faults).
            """,
        discussion: """
            Prints `listening on http://HOST:PORT` (https with --tls-cert) on its first line, serves until SIGINT or \
            SIGTERM, then shuts down gracefully (in-flight requests get up to 10 seconds). A fault scenario is a JSON \
            file of rules and actions (README, "Fault scenarios"); it runs on one loop and stops at once.
            """
    )

    @Option(help: "The address to listen on (an IP literal, or localhost).")
    var host = "127.0.0.1"

    @Option(help: "The port; 0 picks a free one.")
    var port = 8080

    @Option(help: "Event loops (threads) accepting on the port; default one per core.")
    var loops: Int?

    @Option(help: "Serve static files from this directory.")
    var root: String?

    @Flag(help: "Answer every request with JSON describing it.")
    var echo = false

    @Flag(help: "Answer every request with `Hello, World!` (for benchmarks).")
    var hello = false

    @Option(help: "Misbehave as this JSON fault scenario says (delays, trickles, truncations, resets, malformed heads).")
    var faults: String?

    @Option(help: "The seed of the fault scenario's random choices (overrides the file's \"seed\").")
    var seed: UInt64?

    @Flag(
        help: """
            With --faults, print a JSON line per write the server makes (a trickled piece is one) to standard output: \
            {"conn": N, "t": SECONDS, "bytes": N}, N the connection's number from 0, t since the server started.
            """)
    var logWrites = false

    @Option(
        help: """
            Record each connection (every byte in plaintext, with times and read/write boundaries, and each \
            exchange's metrics) to a file of its own in this directory, mode 0600, written when the connection closes (see wire record, wire replay).
            """)
    var record: String?

    @Option(help: "The largest request body accepted, in bytes (413 beyond).")
    var maxBodySize = 16 * 1024 * 1024

    @Option(help: "Serve HTTPS with this PEM certificate (followed by its intermediates); needs --tls-key.")
    var tlsCert: String?

    @Option(help: "The PEM private key of --tls-cert.")
    var tlsKey: String?

    @Option(help: "Require client certificates issued under the CAs of this PEM file (mutual TLS).")
    var clientCa: String?

    /// `--tls-resumption`'s values.
    enum Resumption: String, ExpressibleByArgument, CaseIterable {
        case cache, tickets, off
    }

    @Option(
        help: """
            How returning TLS clients resume: cache (the default: sessions kept in memory for 5 minutes, TLS 1.2 by \
            session ID, TLS 1.3 by tickets naming them), tickets (stateless tickets under keys made at start), or off.
            """)
    var tlsResumption: Resumption?

    func validate() throws {
        let modes = [root != nil, echo, hello, faults != nil].filter { $0 }.count
        guard modes == 1 else { throw ValidationError("choose exactly one of --root DIR, --echo, --hello, --faults FILE") }
        if seed != nil && faults == nil { throw ValidationError("--seed goes with --faults") }
        if logWrites && faults == nil { throw ValidationError("--log-writes goes with --faults") }
        if record != nil && faults != nil { throw ValidationError("--record records --root, --echo or --hello, not --faults") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        if let loops, loops < 1 { throw ValidationError("--loops must be at least 1") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        if clientCa != nil && tlsCert == nil { throw ValidationError("--client-ca needs --tls-cert and --tls-key") }
        if tlsResumption != nil && tlsCert == nil {
            throw ValidationError("--tls-resumption needs --tls-cert and --tls-key")
        }
        if let root {
            guard LocalFiles.kind(atPath: root) == .directory, LocalFiles.realPath(root) != nil else {
                throw ValidationError("--root \(root) is not a directory")
            }
        }
    }

    /// The TLS settings the flags ask for; nil without --tls-cert.
    private func tlsConfiguration() -> TLSServerConfiguration? {
        guard let tlsCert, let tlsKey else { return nil }
        var tls = TLSServerConfiguration(certificateChainFile: tlsCert, privateKeyFile: tlsKey)
        if let clientCa { tls.clientCertificates = .required(caFile: clientCa) }
        switch tlsResumption ?? .cache {
        case .cache: tls.sessionResumption = .serverCache()
        case .tickets: tls.sessionResumption = .tickets()
        case .off: tls.sessionResumption = .disabled
        }
        return tls
    }

    func run() async throws {
        // Ignored, then observed through a dispatch source: the handler runs on a queue, never in signal context.
        let signals = SignalWaiter(signals: [SIGINT, SIGTERM])
        let address = try SocketAddress(ipAddress: host == "localhost" ? "127.0.0.1" : host, port: port)
        if let faults {
            try await serveFaults(faults, address: address, signals: signals)
            return
        }
        var parser = HTTP1ParserConfiguration.strict
        parser.maxBodySize = maxBodySize
        var configuration = HTTPServerConfiguration(address: address, parser: parser)
        configuration.tls = tlsConfiguration()
        var recorder: ServerRecorder?
        if let record {
            do {
                recorder = try ServerRecorder(directory: record, scheme: tlsCert == nil ? "http" : "https", processID: getpid())
            } catch {
                throw ValidationError("--record \(record): cannot make the directory (\(error))")
            }
            configuration.observer = recorder
        }
        let group = try EventLoopGroup(loopCount: loops ?? EventLoopGroup.coreCount, namePrefix: "wire-serve")
        let server: HTTPServer
        if let root {
            let files: HTTPFileHandler
            do { files = try HTTPFileHandler(root: root) } catch { throw ValidationError("--root \(root): \(error)") }
            server = HTTPServer(configuration: configuration, group: group, handler: files)
        } else if echo {
            server = HTTPServer(configuration: configuration, group: group, handler: EchoHandler(maxBodySize: maxBodySize))
        } else {
            server = HTTPServer(configuration: configuration, group: group, handler: HTTPFixedResponseHandler.hello)
        }
        let bound: SocketAddress
        do {
            bound = try await server.start()
        } catch {
            await group.shutdownGracefully()
            throw error
        }
        let hostText = bound.family == .ipv6 ? "[\(bound.host)]" : bound.host
        // Written unbuffered: whoever launched us waits for this line to learn the port.
        let scheme = tlsCert == nil ? "http" : "https"
        StandardStreams.output("listening on \(scheme)://\(hostText):\(bound.port ?? port)\n")
        let signal = await signals.next()
        StandardStreams.error("wire serve: signal \(signal), shutting down\n")
        await server.shutdown(gracePeriod: .seconds(10))
        await group.shutdownGracefully()
        for failure in await recorder?.finish() ?? [] { StandardStreams.error("wire serve: --record: \(failure)\n") }
    }

    /// `--faults FILE`: the scenario on one loop, with TLS when asked; stops at once on a signal (a hostile server
    /// owes its clients no graceful end).
    private func serveFaults(_ path: String, address: SocketAddress, signals: SignalWaiter) async throws {
        var scenario: FaultScenario
        do {
            scenario = try FaultScenario.parse(try LocalFiles.contents(atPath: path))
        } catch let error as FaultScenarioError {
            throw ValidationError("--faults \(path): \(error)")
        } catch {
            throw ValidationError("--faults \(path): cannot read it (\(error))")
        }
        if let seed { scenario.seed = seed }
        var security: (any ServerTransportSecurity)?
        if let tls = tlsConfiguration() {
            var configuration = HTTPServerConfiguration(address: address)
            configuration.tls = tls
            security = configuration.transportSecurity
        } else if let index = scenario.rules.firstIndex(where: { rule in
            if case .cutHandshake = rule.actions.first { true } else { false }
        }) {
            throw ValidationError("--faults \(path): rules[\(index)] cuts a TLS handshake: it needs --tls-cert and --tls-key")
        }
        let loop = try EventLoop(name: "wire-faults")
        let server: FaultServer
        do {
            let started = ContinuousClock.now
            // Told on the loop before the bytes go out: a client holding them finds their lines already written.
            var onWrite: FaultServer.WriteObserver?
            if logWrites {
                onWrite = { (connection: Int, bytes: Int) -> Void in
                    let t = RecordFile.seconds(ContinuousClock.now - started)
                    StandardStreams.output("{\"conn\": \(connection), \"t\": \(t), \"bytes\": \(bytes)}\n")
                }
            }
            server = try await FaultServer.start(scenario, on: loop, address: address, security: security, onWrite: onWrite)
        } catch {
            await loop.shutdownGracefully()
            throw error
        }
        let bound = server.address
        let hostText = bound.family == .ipv6 ? "[\(bound.host)]" : bound.host
        StandardStreams.output("listening on \(tlsCert == nil ? "http" : "https")://\(hostText):\(bound.port ?? port)\n")
        let signal = await signals.next()
        StandardStreams.error("wire serve: signal \(signal), shutting down\n")
        try? await server.close()
        await loop.shutdownGracefully()
    }
}
