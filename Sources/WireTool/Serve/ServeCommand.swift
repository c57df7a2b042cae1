import ArgumentParser
import Glibc
import Wire
import WireTLS

/// `wire serve`: an HTTP/1.1 server with one of three behaviours: static files, echo, or a fixed greeting.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve HTTP/1.1: static files (--root), an echo of each request (--echo), or Hello, World! (--hello).",
        discussion: """
            Prints `listening on http://HOST:PORT` (https with --tls-cert) on its first line, serves until SIGINT or \
            SIGTERM, then shuts down gracefully (in-flight requests get up to 10 seconds).
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

    @Option(help: "The largest request body accepted, in bytes (413 beyond).")
    var maxBodySize = 16 * 1024 * 1024

    @Option(help: "Serve HTTPS with this PEM certificate (followed by its intermediates); needs --tls-key.")
    var tlsCert: String?

    @Option(help: "The PEM private key of --tls-cert.")
    var tlsKey: String?

    @Option(help: "Require client certificates issued under the CAs of this PEM file (mutual TLS).")
    var clientCa: String?

    func validate() throws {
        let modes = [root != nil, echo, hello].filter { $0 }.count
        guard modes == 1 else { throw ValidationError("choose exactly one of --root DIR, --echo, --hello") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        if let loops, loops < 1 { throw ValidationError("--loops must be at least 1") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        if clientCa != nil && tlsCert == nil { throw ValidationError("--client-ca needs --tls-cert and --tls-key") }
        if let root {
            guard LocalFiles.kind(atPath: root) == .directory, LocalFiles.realPath(root) != nil else {
                throw ValidationError("--root \(root) is not a directory")
            }
        }
    }

    func run() async throws {
        // Ignored, then observed through a dispatch source: the handler runs on a queue, never in signal context.
        let signals = SignalWaiter(signals: [SIGINT, SIGTERM])
        let address = try SocketAddress(ipAddress: host == "localhost" ? "127.0.0.1" : host, port: port)
        var parser = HTTP1ParserConfiguration.strict
        parser.maxBodySize = maxBodySize
        var configuration = HTTPServerConfiguration(address: address, parser: parser)
        if let tlsCert, let tlsKey {
            var tls = TLSServerConfiguration(certificateChainFile: tlsCert, privateKeyFile: tlsKey)
            if let clientCa { tls.clientCertificates = .required(caFile: clientCa) }
            configuration.tls = tls
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
    }
}
