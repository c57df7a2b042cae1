import Foundation
import Synchronization
import Wire
import WireTLS

/// Wire's `HTTPServer` with TLS on 127.0.0.1, port 0, serving a certificate chain and answering every request with
/// 200 `ok`; counts the requests that reached HTTP (a refused connection never does).
struct TLSLoopbackServer: Sendable {
    let server: HTTPServer
    let group: EventLoopGroup
    let port: Int

    /// Runs `body` with a server of `chain` and `key` (PEM files), stopping it afterwards whatever happens.
    static func with<T>(chain: String, key: String, _ body: (TLSLoopbackServer) async throws -> T) async throws -> T {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "wireclient-tls-server")
        let counter = Counter()
        var configuration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
        configuration.tls = TLSServerConfiguration(certificateChainFile: chain, privateKeyFile: key)
        let server = HTTPServer(configuration: configuration, group: group) { _, writer in
            counter.value.add(1, ordering: .relaxed)
            try await writer.reply(200, "ok")
        }
        let address: SocketAddress
        do {
            address = try await server.start()
        } catch {
            await group.shutdownGracefully()
            throw error
        }
        let running = TLSLoopbackServer(server: server, group: group, port: address.port!, counter: counter)
        do {
            let result = try await body(running)
            await running.stop()
            return result
        } catch {
            await running.stop()
            throw error
        }
    }

    private let counter: Counter

    private init(server: HTTPServer, group: EventLoopGroup, port: Int, counter: Counter) {
        self.server = server
        self.group = group
        self.port = port
        self.counter = counter
    }

    /// The requests answered so far.
    var served: Int { counter.value.load(ordering: .relaxed) }

    /// `https://<host>:<port><path>`.
    func url(_ path: String = "/", host: String = "127.0.0.1") -> URL {
        URL(string: "https://\(host):\(port)\(path)")!
    }

    private func stop() async {
        await server.shutdown(gracePeriod: .seconds(1))
        await group.shutdownGracefully()
    }

    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }
}
