import Foundation
import Glibc
import Testing
import WireTestSupport
import Wire
import WireTLS

private let nginxPath = "/usr/sbin/nginx"
private let hasNginx = FileManager.default.isExecutableFile(atPath: nginxPath)

extension IOSuite {
    /// `wire get` and Wire's client against nginx serving TLS: one server block per certificate case.
    @Suite(.enabled(if: hasNginx, "nginx is not installed")) struct TLSNginxTests {
        /// nginx with one TLS server block per (name, chain, key), each on a free loopback port.
        final class TLSNginx {
            let prefix: String
            let ports: [String: Int]
            let process: TestProcess

            init(_ sites: [(name: String, chain: String, key: String)]) async throws {
                prefix = FileManager.default.temporaryDirectory.appendingPathComponent("wire-nginx-tls-\(UUID().uuidString)").path
                for folder in ["conf", "logs", "html", "tmp"] {
                    try FileManager.default.createDirectory(atPath: "\(prefix)/\(folder)", withIntermediateDirectories: true)
                }
                try "from nginx\n".write(toFile: "\(prefix)/html/index.html", atomically: true, encoding: .utf8)
                var ports: [String: Int] = [:]
                var servers = ""
                for (site, port) in zip(sites, try LoopbackPort.free(count: sites.count)) {
                    ports[site.name] = port
                    servers += """
                            server {
                                listen 127.0.0.1:\(port) ssl;
                                ssl_certificate \(site.chain);
                                ssl_certificate_key \(site.key);
                                ssl_protocols TLSv1.2 TLSv1.3;
                                root \(prefix)/html;
                            }

                        """
                }
                self.ports = ports
                let configuration = """
                    daemon off;
                    master_process off;
                    worker_processes 1;
                    pid \(prefix)/logs/nginx.pid;
                    error_log \(prefix)/logs/error.log;
                    events { worker_connections 64; }
                    http {
                        access_log off;
                        client_body_temp_path \(prefix)/tmp/body;
                        proxy_temp_path \(prefix)/tmp/proxy;
                        fastcgi_temp_path \(prefix)/tmp/fastcgi;
                        uwsgi_temp_path \(prefix)/tmp/uwsgi;
                        scgi_temp_path \(prefix)/tmp/scgi;
                        ssl_session_cache shared:wire:1m;
                    \(servers)
                    }
                    """
                try configuration.write(toFile: "\(prefix)/conf/nginx.conf", atomically: true, encoding: .utf8)
                process = try TestProcess.nginx(nginxPath, prefix: prefix, failure: NginxExited())
            }

            func url(_ site: String, host: String = "localhost") -> String { "https://\(host):\(ports[site]!)/index.html" }

            func stop() {
                process.stop()
                try? FileManager.default.removeItem(atPath: prefix)
            }
        }

        struct NginxExited: Error {}

        let pki: TestPKI

        init() throws {
            pki = try TestPKI.shared()
        }

        func startNginx() async throws -> TLSNginx {
            try await TLSNginx([
                ("good", pki.goodChain, pki.goodKey),
                ("expired", pki.expiredChain, pki.expiredKey),
                ("leafonly", pki.leafOnlyChain, pki.goodKey),
                ("wronghost", pki.wrongHostChain, pki.wrongHostKey),
                ("selfsigned", pki.selfSignedChain, pki.selfSignedKey),
            ])
        }

        @Test func wireGetAgainstNginxCertificateCases() async throws {
            let nginx = try await startNginx()
            defer { nginx.stop() }
            let root = pki.rootCertificate
            let good = try await WireToolRunner.run(["get", "-sv", "--cacert", root, nginx.url("good")])
            #expect(good.status == 0, "\(good.errors)")
            #expect(good.text == "from nginx\n")
            #expect(good.errors.contains("* TLS: TLSv1.3"), "\(good.errors)")
            #expect(good.errors.contains("ALPN http/1.1"), "\(good.errors)")
            let expectations: [(site: String, host: String, status: Int32, text: String)] = [
                ("expired", "localhost", 60, "has expired"),
                ("leafonly", "localhost", 60, "unknown_issuer"),
                ("wronghost", "localhost", 60, "hostname_mismatch"),
                ("wronghost", "127.0.0.1", 60, "ip_address_mismatch"),
                ("selfsigned", "localhost", 60, "self_signed"),
            ]
            for expectation in expectations {
                let run = try await WireToolRunner.run([
                    "get", "-sS", "--cacert", root, nginx.url(expectation.site, host: expectation.host),
                ])
                #expect(run.status == expectation.status, "\(expectation.site): \(run.errors)")
                #expect(run.errors.contains(expectation.text), "\(expectation.site): \(run.errors)")
            }
            let tls12 = try await WireToolRunner.run(["get", "-sv", "--cacert", root, "--tlsv1.2", nginx.url("good")])
            #expect(tls12.status == 0)
            let chain = try Certificate.load(pemFile: pki.goodChain)
            let pinned = try await WireToolRunner.run(["get", "-s", "--cacert", root, "--pin", chain[1].pin, nginx.url("good")])
            #expect(pinned.status == 0, "\(pinned.errors)")
            let wrongPin = try await WireToolRunner.run([
                "get", "-s", "--cacert", root, "--pin", chain[0].pin, nginx.url("selfsigned"), "-k",
            ])
            #expect(wrongPin.status == 90, "\(wrongPin.errors)")
        }

        @Test func clientResumesNginxSessions() async throws {
            let nginx = try await startNginx()
            defer { nginx.stop() }
            for version in [TLSVersion.tls12, .tls13] {
                var configuration = HTTPClientConfiguration()
                var tls = TLSConfiguration()
                tls.trustRoots = .pemFile(pki.rootCertificate)
                tls.maximumVersion = version
                configuration.tls = tls
                let client = try HTTPClient(configuration: configuration)
                var resumed: [Bool] = []
                let url = nginx.url("good")
                for _ in 0..<3 {
                    let response = try await withTimeout(seconds: 10) {
                        try await client.execute(HTTPClientRequest(url: url, headers: ["connection": "close"]))
                    }
                    let body = try await response.body.collect(upTo: 1 << 16)
                    #expect(body.readableBytes == 11)
                    resumed.append(response.metrics.snapshot.transportSecurity?.isSessionResumed ?? false)
                    #expect(response.metrics.snapshot.transportSecurity?.protocolVersion == version.description)
                }
                await client.shutdown()
                #expect(resumed == [false, true, true], "\(version)")
            }
        }
    }
}
