import Foundation
import Glibc
import Testing
import WireTestSupport
import Wire

/// Whether nginx is installed (CI installs nginx-light).
private let nginxPath = "/usr/sbin/nginx"
private let hasNginx = FileManager.default.isExecutableFile(atPath: nginxPath)

extension IOSuite {
    /// `wire get` against a test-owned nginx, whose access log records the connection serial number
    /// (`$connection`) of every request: the proof that two URLs went over one connection.
    @Suite(.enabled(if: hasNginx, "nginx is not installed")) struct GetCommandNginxTests {
        /// One nginx instance in a temporary prefix folder, listening on a free loopback port and on a Unix socket.
        final class Nginx {
            let prefix: URL
            let port: Int
            let process: TestProcess
            var socketPath: String { prefix.appendingPathComponent("nginx.sock").path }
            var accessLog: URL { prefix.appendingPathComponent("logs/access.log") }

            init() async throws {
                prefix = try WireToolRunner.temporaryFolder()
                for folder in ["conf", "logs", "html", "tmp"] {
                    try FileManager.default.createDirectory(
                        at: prefix.appendingPathComponent(folder), withIntermediateDirectories: true)
                }
                try "alpha\n".write(to: prefix.appendingPathComponent("html/a.txt"), atomically: true, encoding: .utf8)
                try "bravo\n".write(to: prefix.appendingPathComponent("html/b.txt"), atomically: true, encoding: .utf8)
                port = try LoopbackPort.free()
                let root = prefix.path
                let configuration = """
                    daemon off;
                    master_process off;
                    worker_processes 1;
                    pid \(root)/logs/nginx.pid;
                    error_log \(root)/logs/error.log;
                    events { worker_connections 64; }
                    http {
                        log_format wire '$connection $connection_requests $request_method $request_uri $http_host';
                        access_log \(root)/logs/access.log wire;
                        client_body_temp_path \(root)/tmp/body;
                        proxy_temp_path \(root)/tmp/proxy;
                        fastcgi_temp_path \(root)/tmp/fastcgi;
                        uwsgi_temp_path \(root)/tmp/uwsgi;
                        scgi_temp_path \(root)/tmp/scgi;
                        keepalive_timeout 60s;
                        server {
                            listen 127.0.0.1:\(port);
                            listen unix:\(root)/nginx.sock;
                            root \(root)/html;
                        }
                    }
                    """
                try configuration.write(to: prefix.appendingPathComponent("conf/nginx.conf"), atomically: true, encoding: .utf8)
                process = try TestProcess.nginx(nginxPath, prefix: root, failure: NginxDidNotStart())
            }

            /// The access log's lines, split into fields, once it has `count` of them (at most 10 s): nginx logs a
            /// request just after sending its response, so a client can be done a moment before the line is there.
            func logLines(count: Int) async throws -> [[String]] {
                let log = accessLog
                return try await withTimeout(seconds: 10) {
                    while true {
                        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                        let lines = text.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
                        if lines.count >= count { return lines }
                        try await Task.sleep(for: .milliseconds(20))
                    }
                }
            }

            func stop() {
                process.stop()
                try? FileManager.default.removeItem(at: prefix)
            }
        }

        /// nginx exited before it listened (its reason is in the prefix's logs/error.log).
        struct NginxDidNotStart: Error {}

        @Test func twoURLsInOneCallShareOneConnection() async throws {
            let nginx = try await Nginx()
            defer { nginx.stop() }
            let base = "http://127.0.0.1:\(nginx.port)"
            let run = try await WireToolRunner.run(["get", "\(base)/a.txt", "\(base)/b.txt"])
            #expect(run.status == 0)
            #expect(run.text == "alpha\nbravo\n")
            let lines = try await nginx.logLines(count: 2)
            try #require(lines.count == 2)
            #expect(lines[0][0] == lines[1][0], "both requests on connection \(lines[0][0])")
            #expect(lines.map { $0[1] } == ["1", "2"])
            #expect(lines.map { $0[3] } == ["/a.txt", "/b.txt"])
        }

        @Test func unixSocketCarriesTheRequestWithTheURLsHost() async throws {
            let nginx = try await Nginx()
            defer { nginx.stop() }
            let run = try await WireToolRunner.run([
                "get", "--unix-socket", nginx.socketPath, "http://files.example:8080/a.txt?x=1",
                "http://files.example:8080/b.txt",
            ])
            #expect(run.status == 0)
            #expect(run.text == "alpha\nbravo\n")
            let lines = try await nginx.logLines(count: 2)
            try #require(lines.count == 2)
            #expect(lines[0][0] == lines[1][0])
            #expect(lines.map { $0[3] } == ["/a.txt?x=1", "/b.txt"])
            #expect(lines.map { $0[4] } == ["files.example:8080", "files.example:8080"])
        }
    }
}
