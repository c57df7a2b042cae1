import Foundation
import Glibc
import Synchronization
@_spi(Locking) import Wire

/// A proxy from Debian (tinyproxy, danted, microsocks) or a scripted Python peer, started for one test on a loopback
/// port. CI installs the Debian ones (.ci/run); a suite skips, saying why, only where the binary is missing.
///
/// The daemons ignore standard input, so a shell runs each and a watcher SIGKILLs it once the pipe to the shell
/// closes: on `stop()`, or when the test process ends however it ends (as `TestNginx` does).
final class TestProxy: Sendable {
    /// The port it listens on, on 127.0.0.1.
    let port: Int
    /// A folder of its own: configuration, log, records.
    let folder: String
    /// The process, until `stop()` ends it.
    private let process: Lock<TestProcess?>
    /// Whether the process is the watching shell, which is SIGKILLed: with SIGTERM and SIGCHLD blocked (a mask a
    /// child inherits from a test thread) it would neither stop nor see its child end.
    private let isWatchingShell: Bool

    private init(port: Int, folder: String, process: sending TestProcess, isWatchingShell: Bool = false) {
        self.port = port
        self.folder = folder
        self.process = Lock(process)
        self.isWatchingShell = isWatchingShell
    }

    /// Debian's paths.
    static let tinyproxyPath = "/usr/bin/tinyproxy"
    static let dantedPath = "/usr/sbin/danted"
    static let microsocksPath = "/usr/bin/microsocks"

    /// Why a test of `path` cannot run here, or nil when the binary is installed.
    static func missing(_ path: String) -> String? {
        access(path, X_OK) == 0 ? nil : "\(path) is not installed (apt-get install tinyproxy dante-server microsocks)"
    }

    /// tinyproxy in the foreground: forwarding, and CONNECT to `connectPorts` (every port when empty); with
    /// `basicAuth`, every request must carry those credentials (else 407).
    static func tinyproxy(connectPorts: [Int] = [], basicAuth: (user: String, password: String)? = nil) throws -> TestProxy {
        let folder = try makeFolder("tinyproxy")
        let port = try LoopbackPort.free()
        var lines = [
            "Port \(port)", "Listen 127.0.0.1", "Timeout 30", "MaxClients 200", "LogLevel Connect",
            "LogFile \"\(folder)/tinyproxy.log\"", "Allow 127.0.0.1", "DisableViaHeader Yes",
        ]
        lines += connectPorts.map { "ConnectPort \($0)" }
        if let basicAuth { lines.append("BasicAuth \(basicAuth.user) \(basicAuth.password)") }
        try (lines.joined(separator: "\n") + "\n").write(toFile: folder + "/tinyproxy.conf", atomically: true, encoding: .utf8)
        return try start(tinyproxyPath, ["-d", "-c", folder + "/tinyproxy.conf"], port: port, folder: folder)
    }

    /// microsocks (SOCKS 5), with RFC 1929 authentication when `user` is given.
    static func microsocks(user: String? = nil, password: String? = nil) throws -> TestProxy {
        let folder = try makeFolder("microsocks")
        let port = try LoopbackPort.free()
        var arguments = ["-i", "127.0.0.1", "-p", String(port)]
        if let user, let password { arguments += ["-u", user, "-P", password] }
        return try start(microsocksPath, arguments, port: port, folder: folder)
    }

    /// danted (SOCKS 5, no authentication), running as the current user.
    static func danted() throws -> TestProxy {
        let folder = try makeFolder("danted")
        let port = try LoopbackPort.free()
        let user = String(cString: getpwuid(getuid()).pointee.pw_name)
        let configuration = """
            logoutput: \(folder)/danted.log
            internal: 127.0.0.1 port = \(port)
            external: 127.0.0.1
            clientmethod: none
            socksmethod: none
            user.privileged: \(user)
            user.unprivileged: \(user)
            client pass { from: 127.0.0.0/8 to: 0.0.0.0/0 }
            socks pass { from: 127.0.0.0/8 to: 0.0.0.0/0 }

            """
        try configuration.write(toFile: folder + "/danted.conf", atomically: true, encoding: .utf8)
        return try start(dantedPath, ["-f", folder + "/danted.conf", "-N", "1"], port: port, folder: folder)
    }

    /// The system user danted's `username` method checks (made by `.ci/run` and the README's set-up), and its password.
    static let dantedUser = (user: "wire-socks", password: "wire-socks-pw")

    /// Why danted with RFC 1929 authentication cannot run here, or nil: it checks system users itself (getpwnam and
    /// the shadow file, which only root reads; no PAM), so it needs `dantedUser` and a test process run as root.
    static var dantedWithPasswordMissing: String? {
        if let reason = missing(dantedPath) { return reason }
        guard getuid() == 0 else { return "danted's username method reads /etc/shadow: the tests do not run as root" }
        guard getpwnam(dantedUser.user) != nil else {
            return "no system user \(dantedUser.user) (useradd --system wire-socks; chpasswd, as .ci/run does)"
        }
        return nil
    }

    /// danted with SOCKS 5 username/password authentication (RFC 1929) against `dantedUser`, running as root.
    static func dantedWithPassword() throws -> TestProxy {
        let folder = try makeFolder("danted-password")
        let port = try LoopbackPort.free()
        let configuration = """
            logoutput: \(folder)/danted.log
            internal: 127.0.0.1 port = \(port)
            external: 127.0.0.1
            clientmethod: none
            socksmethod: username
            user.privileged: root
            user.unprivileged: root
            client pass { from: 127.0.0.0/8 to: 0.0.0.0/0 }
            socks pass { from: 127.0.0.0/8 to: 0.0.0.0/0 }

            """
        try configuration.write(toFile: folder + "/danted.conf", atomically: true, encoding: .utf8)
        return try start(dantedPath, ["-f", folder + "/danted.conf", "-N", "1"], port: port, folder: folder)
    }

    /// `Resources/socks_peer.py`: SOCKS 4, 4a and 5, every reply code on demand (see the script), each request
    /// recorded (`records`).
    static func scriptedSOCKS(credentials: String? = nil) async throws -> TestProxy {
        let folder = try makeFolder("socks-peer")
        let peer = try TestProcess(
            "/usr/bin/env", ["python3", "\(testResources)/socks_peer.py", folder + "/records"] + (credentials.map { [$0] } ?? []))
        guard let port = Int(try await peer.firstLine()) else {
            peer.stop()
            throw TestTimeout(seconds: 0)
        }
        return TestProxy(port: port, folder: folder, process: peer)
    }

    /// `Resources/slow_connect_proxy.py`: holds each CONNECT's answer for `hold` seconds and records the bytes the
    /// client sent meanwhile (`records`: "TARGET COUNT").
    static func slowConnect(hold: Double) async throws -> TestProxy {
        let folder = try makeFolder("slow-connect")
        let peer = try TestProcess(
            "/usr/bin/env", ["python3", "\(testResources)/slow_connect_proxy.py", folder + "/records", String(hold)])
        guard let port = Int(try await peer.firstLine()) else {
            peer.stop()
            throw TestTimeout(seconds: 0)
        }
        return TestProxy(port: port, folder: folder, process: peer)
    }

    /// `Resources/tls_front.py`: TLS with `chain`/`key` in front of the plain proxy at `target`.
    static func tlsFront(chain: String, key: String, target: Int) async throws -> TestProxy {
        let folder = try makeFolder("tls-front")
        let peer = try TestProcess("/usr/bin/env", ["python3", "\(testResources)/tls_front.py", chain, key, String(target)])
        guard let port = Int(try await peer.firstLine()) else {
            peer.stop()
            throw TestTimeout(seconds: 0)
        }
        return TestProxy(port: port, folder: folder, process: peer)
    }

    /// The lines the scripted SOCKS peer recorded, one per request.
    var records: [String] {
        ((try? String(contentsOfFile: folder + "/records", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// tinyproxy's log.
    var log: String { (try? String(contentsOfFile: folder + "/tinyproxy.log", encoding: .utf8)) ?? "" }

    /// How many CONNECT requests tinyproxy received.
    var connectCount: Int {
        log.split(separator: "\n").filter { $0.contains("Request (file descriptor") && $0.contains(": CONNECT ") }.count
    }

    /// Stops the proxy and removes its folder.
    func stop() {
        let isWatchingShell = self.isWatchingShell
        process.withLock { process in
            // The pipe closes in `stop()`, so the watcher kills the daemon whatever happens to the shell.
            if isWatchingShell, let shell = process?.process, shell.isRunning { kill(shell.processIdentifier, SIGKILL) }
            process?.stop()
            process = nil
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    private static func makeFolder(_ name: String) throws -> String {
        let folder = NSTemporaryDirectory() + "wire-\(name)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Starts `executable` under the watching shell and waits (at most 10 s) until the port accepts connections.
    private static func start(_ executable: String, _ arguments: [String], port: Int, folder: String) throws -> TestProxy {
        let script = #"exec 3<&0; "$0" "$@" </dev/null >/dev/null 2>&1 & pid=$!; (cat <&3 >/dev/null; kill -9 $pid) & wait $pid"#
        let process = try TestProcess("/bin/sh", ["-c", script, executable] + arguments)
        let running = process.process
        let proxy = TestProxy(port: port, folder: folder, process: process, isWatchingShell: true)
        let deadline = Date().addingTimeInterval(10)
        while !LoopbackPort.accepts(port) {
            guard running.isRunning, Date() < deadline else {
                proxy.stop()
                throw DidNotStart(executable: executable)
            }
            usleep(10_000)
        }
        return proxy
    }

    /// The proxy exited, or did not listen within 10 s.
    struct DidNotStart: Error, CustomStringConvertible {
        let executable: String
        var description: String { "\(executable) did not start listening" }
    }
}
