import Foundation
import Glibc

/// One nginx in a temporary prefix folder, listening on a free loopback port, for tests that meet a real server
/// (ranges, compression, caching headers). CI installs nginx-light; suites check `TestNginx.isInstalled` first.
///
/// nginx ignores its standard input, and a child spawned from a test thread inherits that thread's signal mask, where
/// SIGTERM may be blocked. So a shell runs it and a watcher SIGKILLs it once the pipe to the shell closes: on `stop()`,
/// or when the test process ends however it ends.
public final class TestNginx: Sendable {
    /// Where Debian's nginx lives.
    public static let executable = "/usr/sbin/nginx"
    /// Whether nginx is installed.
    public static var isInstalled: Bool { access(executable, X_OK) == 0 }

    /// The prefix folder: `conf/`, `logs/`, `html/` (the document root), `tmp/`.
    public let prefix: String
    /// The loopback port nginx listens on.
    public let port: Int
    /// The document root: files placed here are served at `/<name>`.
    public var root: String { prefix + "/html" }
    /// `http://127.0.0.1:<port>`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }
    /// The loopback ports of the `tlsSites` server blocks, in their order.
    public let tlsPorts: [Int]
    private let process: Process
    private let keepAlive: Pipe
    /// The shell's standard output, which nothing writes to: it reaches end of file when the shell exits.
    private let exitPipe: Pipe

    /// Starts nginx and waits (at most 10 s) until it accepts connections: until it has written its pid file,
    /// which it does once every listening socket listens.
    /// - Parameters:
    ///   - files: Document-root files, by name (no folders), with their contents.
    ///   - httpDirectives: Extra lines for the `http` block (`gzip on;`, `gzip_types …;`).
    ///   - serverDirectives: Extra lines for every `server` block (`location`s, `add_header`s).
    ///   - tlsSites: One more `server` block per site, each on a free port of its own (`tlsPorts`), serving the same
    ///     document root over TLS with the site's certificate file (sent as it is) and key.
    public init(
        files: [String: Data] = [:], httpDirectives: String = "", serverDirectives: String = "",
        tlsSites: [TLSSite] = []
    ) throws {
        prefix = NSTemporaryDirectory() + "wire-nginx-\(UUID().uuidString)"
        for folder in ["conf", "logs", "html", "tmp"] {
            try FileManager.default.createDirectory(atPath: prefix + "/" + folder, withIntermediateDirectories: true)
        }
        for (name, contents) in files {
            try contents.write(to: URL(fileURLWithPath: prefix + "/html/" + name))
        }
        // Distinct ports: the kernel may hand out a port again once the probe that found it is closed.
        var ports: [Int] = []
        while ports.count <= tlsSites.count {
            let free = try Self.freePort()
            if !ports.contains(free) { ports.append(free) }
        }
        port = ports[0]
        tlsPorts = Array(ports.dropFirst())
        let root = prefix + "/html"
        let tlsServers = zip(tlsSites, tlsPorts).map { site, port in
            """
            server {
                    listen 127.0.0.1:\(port) ssl;
                    ssl_certificate \(site.chain);
                    ssl_certificate_key \(site.key);
                    root \(root);
                    \(serverDirectives)
                }
            """
        }.joined(separator: "\n    ")
        let configuration = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(prefix)/logs/nginx.pid;
            error_log \(prefix)/logs/error.log;
            events { worker_connections 256; }
            http {
                access_log \(prefix)/logs/access.log;
                client_body_temp_path \(prefix)/tmp/body;
                proxy_temp_path \(prefix)/tmp/proxy;
                fastcgi_temp_path \(prefix)/tmp/fastcgi;
                uwsgi_temp_path \(prefix)/tmp/uwsgi;
                scgi_temp_path \(prefix)/tmp/scgi;
                \(httpDirectives)
                server {
                    listen 127.0.0.1:\(port);
                    root \(prefix)/html;
                    \(serverDirectives)
                }
                \(tlsServers)
            }
            """
        try configuration.write(toFile: prefix + "/conf/nginx.conf", atomically: true, encoding: .utf8)
        let script =
            #"exec 3<&0; "$0" "$@" </dev/null >/dev/null & pid=$!; (cat <&3 >/dev/null; kill -9 $pid) >/dev/null & wait $pid"#
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", script, Self.executable, "-p", prefix, "-e", prefix + "/logs/error.log",
            "-c", prefix + "/conf/nginx.conf",
        ]
        keepAlive = Pipe()
        exitPipe = Pipe()
        process.standardInput = keepAlive
        process.standardOutput = exitPipe
        process.standardError = FileHandle.nullDevice
        do {
            try PeerReadiness.awaitFile(named: "nginx.pid", in: prefix + "/logs", within: .seconds(10)) {
                try process.run()
                return exitPipe.fileHandleForReading
            }
        } catch {
            let log = (try? String(contentsOfFile: prefix + "/logs/error.log", encoding: .utf8)) ?? ""
            // `stop()` only for a shell that runs: one that never started has no process to kill (its identifier is
            // 0, which `kill` reads as the whole process group). The prefix folder goes either way.
            if process.isRunning { stop() } else { try? FileManager.default.removeItem(atPath: prefix) }
            throw DidNotStart(log: "\(error): \(log)")
        }
    }

    /// A TLS `server` block: the PEM file nginx sends (leaf first, then whatever else it holds, in order) and the
    /// leaf's key.
    public struct TLSSite: Sendable {
        /// The certificate file, `ssl_certificate`.
        public let chain: String
        /// The private key file, `ssl_certificate_key`.
        public let key: String

        /// A site serving `chain` with `key`.
        public init(chain: String, key: String) {
            self.chain = chain
            self.key = key
        }
    }

    /// nginx exited, or did not listen within 10 s; `log` is its error log.
    public struct DidNotStart: Error, CustomStringConvertible {
        /// nginx's error log.
        public let log: String
        /// The log, for the test's failure message.
        public var description: String { "nginx did not start: \(log)" }
    }

    /// Stops nginx and removes the prefix folder. Closing the pipe makes the shell's watcher SIGKILL nginx; the shell
    /// itself is killed too, since with SIGCHLD blocked (inherited) its `wait` would never return.
    public func stop() {
        try? keepAlive.fileHandleForWriting.close()
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: prefix)
    }

    /// A port the kernel had free a moment ago.
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(descriptor) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
