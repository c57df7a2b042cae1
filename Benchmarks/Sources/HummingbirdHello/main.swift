import Glibc
import Hummingbird
import Logging
import NIOCore
import NIOPosix

// A Hummingbird 2 server answering GET / with `Hello, World!`, the peer of `wire serve --hello --loops 1` in
// run.sh's server rows: one NIO event-loop thread. Prints `listening on http://HOST:PORT` once it accepts
// (port 0 picks a free one), and stops gracefully on SIGINT or SIGTERM.
//
//   HummingbirdHello [PORT=8080] [HOST=127.0.0.1]

let arguments = CommandLine.arguments
let port = arguments.count > 1 ? Int(arguments[1]) ?? 8080 : 8080
let host = arguments.count > 2 ? arguments[2] : "127.0.0.1"

var logger = Logger(label: "HummingbirdHello")
logger.logLevel = .warning

let router = Router()
router.get("/") { _, _ in "Hello, World!" }

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let app = Application(
    router: router,
    configuration: .init(address: .hostname(host, port: port), backlog: 4096),
    onServerRunning: { channel in
        // Written unbuffered: whoever launched us waits for this line to learn the port.
        let line = "listening on http://\(host):\(channel.localAddress?.port ?? port)\n"
        _ = line.withCString { write(1, $0, strlen($0)) }
    },
    eventLoopGroupProvider: .shared(group),
    logger: logger
)
try await app.runService()
try await group.shutdownGracefully()
