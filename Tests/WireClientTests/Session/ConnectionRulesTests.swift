import Foundation
import Testing
import Wire
import WireClient
import WireTestSupport

/// The connection rules against real sockets: `networkServiceType` as the traffic class the server's kernel saw on the
/// SYN (read with `getsockopt` by Python on the server side), connections pooled per service type, and
/// `allowsCellularAccess` refusing a connection whose local interface is classified cellular.
@Suite(.sharedIO(minutes: 1))
struct ConnectionRulesTests {
    /// A keep-alive HTTP/1.1 server that answers every request with the connection's number and the traffic class
    /// of the SYN that opened it: `IP_RECVTOS`/`IPV6_RECVTCLASS` on the listener, then `IP_PKTOPTIONS`/
    /// `IPV6_2292PKTOPTIONS` on the accepted socket, whose control message holds the received class.
    static func script(ipv6: Bool) -> String {
        """
        import http.server, socket, struct, sys, itertools
        IPV6 = \(ipv6 ? "True" : "False")
        LEVEL = socket.IPPROTO_IPV6 if IPV6 else socket.IPPROTO_IP
        RECV, PKTOPTIONS, CLASS = (66, 6, 67) if IPV6 else (13, 9, 1)
        numbers = itertools.count(1)

        def received_class(sock):
            raw = sock.getsockopt(LEVEL, PKTOPTIONS, 256)
            offset = 0
            while offset + 16 <= len(raw):
                length, level, kind = struct.unpack_from("Qii", raw, offset)
                if level == LEVEL and kind == CLASS:
                    return struct.unpack_from("i", raw, offset + 16)[0]
                offset += (length + 7) // 8 * 8
            return -1

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def setup(self):
                super().setup()
                self.number = next(numbers)
                self.traffic_class = received_class(self.connection)
            def do_GET(self):
                body = ("%d %d" % (self.number, self.traffic_class)).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            address_family = socket.AF_INET6 if IPV6 else socket.AF_INET
            def server_bind(self):
                self.socket.setsockopt(LEVEL, RECV, 1)
                super().server_bind()

        server = Server(("::1" if IPV6 else "127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """
    }

    /// Runs `body` with the class-reporting server's base URL.
    static func withClassServer(ipv6: Bool = false, _ body: (String) async throws -> Void) async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try script(ipv6: ipv6).write(toFile: folder + "/server.py", atomically: true, encoding: .utf8)
        let (process, port) = try await PythonPeer.start(script: folder + "/server.py", folder: folder)
        defer { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        try await body(ipv6 ? "http://[::1]:\(port)" : "http://127.0.0.1:\(port)")
    }

    /// The connection number and traffic class the server reports for one GET.
    static func connectionAndClass(_ manager: SessionManager, _ url: String, _ serviceType: NetworkServiceType? = nil)
        async throws -> [Int]
    {
        var request = ClientRequest(url: URL(string: url + "/")!)
        request.networkServiceType = serviceType
        let result = try await manager.data(for: request)
        let text = String(decoding: result.data ?? Data(), as: UTF8.self)
        return text.split(separator: " ").compactMap { Int($0) }
    }

    @Test func eachServiceTypeMarksItsSYNAndHasConnectionsOfItsOwn() async throws {
        try await Self.withClassServer { base async throws in
            let manager = rawDataManager()
            defer { manager.invalidateSession(cancelingTasks: true) }
            // One after another, so each service type's pool keeps its one connection.
            #expect(try await Self.connectionAndClass(manager, base) == [1, 0])
            #expect(try await Self.connectionAndClass(manager, base, .video) == [2, 0x88])
            #expect(try await Self.connectionAndClass(manager, base, .video) == [2, 0x88])
            #expect(try await Self.connectionAndClass(manager, base, .background) == [3, 0x20])
            #expect(try await Self.connectionAndClass(manager, base, .voice) == [4, 0xB8])
            #expect(try await Self.connectionAndClass(manager, base, .responsiveData) == [5, 0x48])
            #expect(try await Self.connectionAndClass(manager, base, .default) == [1, 0])
            #expect(try await Self.connectionAndClass(manager, base) == [1, 0])
        }
    }

    @Test func theSessionsServiceTypeAppliesOverIPv6Too() async throws {
        try await Self.withClassServer(ipv6: true) { base async throws in
            let manager = rawDataManager { $0.networkServiceType = .voice }
            defer { manager.invalidateSession(cancelingTasks: true) }
            #expect(try await Self.connectionAndClass(manager, base) == [1, 0xB8])
            // A request's own value overrides the session's.
            #expect(try await Self.connectionAndClass(manager, base, .default) == [2, 0])
        }
    }

    /// A sysfs fixture in which `lo` is a raw-IP modem (hardware type 519), so that loopback connections leave
    /// through a "cellular" interface.
    static func cellularLoopback() throws -> String {
        let root = try makeTemporaryFolder()
        try FileManager.default.createDirectory(atPath: root + "/class/net/lo", withIntermediateDirectories: true)
        try "519\n".write(toFile: root + "/class/net/lo/type", atomically: true, encoding: .utf8)
        return root
    }

    @Test func deniedCellularAccessClosesTheConnectionBeforeAnyRequest() async throws {
        let sysfs = try Self.cellularLoopback()
        defer { try? FileManager.default.removeItem(atPath: sysfs) }
        try await LoopbackServer.with({ _, writer in try await writer.reply(200, "ok") }) { server in
            let denying = rawDataManager {
                $0.allowsCellularAccess = false
                $0.interfaceClassifier = InterfaceClassifier(sysfsRoot: sysfs)
            }
            defer { denying.invalidateSession(cancelingTasks: true) }
            do {
                _ = try await denying.data(for: ClientRequest(url: server.url("/")))
                Issue.record("a connection over the cellular interface carried the request")
            } catch let error as ClientError {
                #expect(error.code == .notConnectedToInternet && error.urlErrorCode == -1009)
                let reason = error.failureReason ?? ""
                #expect(reason.contains("cellular access denied") && reason.contains("on lo"), "\(reason)")
            }
            #expect(server.requests.isEmpty, "the refused connection carried a request")

            // The request's own permission overrides the session's; so does a classifier that sees loopback.
            var allowed = ClientRequest(url: server.url("/"))
            allowed.allowsCellularAccess = true
            #expect(try await denying.data(for: allowed).response?.statusCode == 200)
            let realSysfs = rawDataManager { $0.allowsCellularAccess = false }
            defer { realSysfs.invalidateSession(cancelingTasks: true) }
            #expect(try await realSysfs.data(for: ClientRequest(url: server.url("/"))).response?.statusCode == 200)
            #expect(server.requests.count == 2)
        }
    }

    @Test func theTrafficClassByServiceTypeIsTheSpecsDSCP() {
        #expect(NetworkServiceType.default.trafficClass == nil)
        #expect(NetworkServiceType.background.trafficClass == 0x20)  // CS1
        #expect(NetworkServiceType.video.trafficClass == 0x88)  // AF41
        #expect(NetworkServiceType.voice.trafficClass == 0xB8)  // EF
        #expect(NetworkServiceType.responsiveData.trafficClass == 0x48)  // AF21
    }
}
