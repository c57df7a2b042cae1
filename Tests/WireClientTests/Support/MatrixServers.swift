import Foundation
import Synchronization
import Wire
import WireTestSupport
import WireTLS

/// The TLS server a matrix test meets.
enum MatrixServerKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Wire's `HTTPServer` with WireTLS.
    case wire
    /// nginx (nginx-light's ssl module): a server that sends its configured certificate list as it is.
    case nginx

    var description: String { rawValue }
}

/// Servers of one kind on 127.0.0.1, one port per certificate case, each sending that case's certificate list and
/// answering `GET /ok.txt` with `ok`. Started once, stopped whatever the body does.
struct MatrixServers: Sendable {
    /// The port of each certificate case.
    let ports: [MatrixCertificates.Case: Int]
    /// How many requests reached HTTP so far, over all the ports (a refused connection carries none).
    let served: @Sendable () -> Int

    /// `https://localhost:<port>/ok.txt` for `certificate`.
    func url(_ certificate: MatrixCertificates.Case) -> URL {
        URL(string: "https://localhost:\(ports[certificate]!)/ok.txt")!
    }

    /// Runs `body` with every certificate case served by `kind`.
    static func with<T>(
        _ kind: MatrixServerKind, _ pki: MatrixCertificates,
        _ body: (MatrixServers) async throws -> T
    ) async throws -> T {
        let cases = MatrixCertificates.Case.allCases
        switch kind {
        case .nginx:
            let sites = cases.map { TestNginx.TLSSite(chain: pki.chain($0), key: pki.key($0)) }
            let nginx = try TestNginx(files: ["ok.txt": Data("ok".utf8)], tlsSites: sites)
            defer { nginx.stop() }
            let log = nginx.prefix + "/logs/access.log"
            let servers = MatrixServers(ports: Dictionary(uniqueKeysWithValues: zip(cases, nginx.tlsPorts))) {
                ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count
            }
            return try await body(servers)
        case .wire:
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "wireclient-matrix")
            let counter = Counter()
            var started: [HTTPServer] = []
            var ports: [MatrixCertificates.Case: Int] = [:]
            let result: Result<T, any Error>
            do {
                for certificate in cases {
                    var configuration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
                    configuration.tls = TLSServerConfiguration(
                        certificateChainFile: pki.chain(certificate),
                        privateKeyFile: pki.key(certificate))
                    let server = HTTPServer(configuration: configuration, group: group) { _, writer in
                        counter.value.add(1, ordering: .relaxed)
                        try await writer.reply(200, "ok")
                    }
                    ports[certificate] = try await server.start().port!
                    started.append(server)
                }
                result = .success(try await body(MatrixServers(ports: ports) { counter.value.load(ordering: .relaxed) }))
            } catch {
                result = .failure(error)
            }
            for server in started { await server.shutdown(gracePeriod: .seconds(1)) }
            await group.shutdownGracefully()
            return try result.get()
        }
    }

    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }
}
