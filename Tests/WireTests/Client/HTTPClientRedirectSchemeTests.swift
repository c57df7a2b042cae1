import Synchronization
import Testing
@_spi(Locking) import Wire

extension IOSuite {
    /// A server may redirect only to `http` or `https`: never into a local Unix socket (server-side request forgery
    /// into container daemons and admin sockets), whatever the hop, the method or the hook.
    @Suite struct HTTPClientRedirectSchemeTests {
        /// A Unix socket that must never be reached: it answers 200 so that a connection would also show as success.
        struct Trap {
            let server: ScriptedServer
            let path: String
            var encodedPath: String { HTTPClientRedirectSchemeTests.encode(path) }
            var url: String { "http+unix://\(encodedPath)/containers/json" }
        }

        /// Runs `body` with a TCP server answering by `script` (given the trap's URL) and a trap socket beside it;
        /// afterwards the trap must have accepted nothing.
        static func withRedirector(
            configuration: HTTPClientConfiguration = HTTPClientConfiguration(),
            expectTrapUntouched: Bool = true,
            script: @escaping @Sendable (_ trapURL: String, _ request: Int, _ head: String) -> ScriptedServer.Reply,
            _ body: @escaping @Sendable (HTTPClient, ScriptedServer, Trap) async throws -> Void
        ) async throws {
            let group = try EventLoopGroup(loopCount: 1)
            let path = "/tmp/wire-trap-\(UInt32.random(in: 0...UInt32.max)).sock"
            let trapServer = try await ScriptedServer.start(on: group.next(), address: try SocketAddress(unixPath: path)) {
                _, _, _ in
                .respond(ScriptedServer.ok("trapped"))
            }
            let trap = Trap(server: trapServer, path: path)
            let trapURL = trap.url
            let redirector = try await ScriptedServer.start(on: group.next()) { _, request, head in script(trapURL, request, head)
            }
            let client = try HTTPClient(configuration: configuration, group: group)
            let outcome: Result<Void, any Error>
            do {
                try await withTimeout(seconds: 60) { try await body(client, redirector, trap) }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            if expectTrapUntouched { #expect(try await trapServer.connectionCount() == 0, "the Unix socket was reached") }
            await client.shutdown()
            try await redirector.close()
            try await trapServer.close()
            await group.shutdownGracefully()
            try outcome.get()
        }

        static func redirect(_ status: String, to location: String) -> ScriptedServer.Reply {
            .respond("HTTP/1.1 \(status)\r\nLocation: \(location)\r\nContent-Length: 0\r\n\r\n")
        }

        static func expectRefused(_ request: HTTPClientRequest, _ client: HTTPClient) async {
            do {
                _ = try await client.execute(request)
                Issue.record("the redirect was followed")
            } catch {
                #expect(error.code == .redirectSchemeNotAllowed)
                #expect(error.description.contains("not allowed in a redirect"))
            }
        }

        static func encode(_ path: String) -> String {
            PercentEncoding.encode(path, allowing: .unreserved)
        }

        static func url(_ server: ScriptedServer, _ path: String = "/") -> String {
            "http://\(server.address.host):\(server.address.port!)\(path)"
        }

        @Test func aLocationNamingAUnixSocketIsRefused() async throws {
            try await Self.withRedirector(script: { trap, _, _ in Self.redirect("302 Found", to: trap) }) { client, server, _ in
                await Self.expectRefused(HTTPClientRequest(url: Self.url(server)), client)
            }
        }

        @Test func aPostIsNotReplayedIntoAUnixSocketOn307Or308() async throws {
            for status in ["307 Temporary Redirect", "308 Permanent Redirect"] {
                try await Self.withRedirector(script: { trap, _, _ in Self.redirect(status, to: trap) }) { client, server, _ in
                    var request = HTTPClientRequest(url: Self.url(server))
                    request.method = .post
                    request.body = .bytes(ByteBuffer(string: "{\"Image\":\"alpine\"}"))
                    await Self.expectRefused(request, client)
                }
            }
        }

        @Test func aLaterHopIsCheckedToo() async throws {
            try await Self.withRedirector(script: { trap, request, head in
                head.hasPrefix("GET /second ")
                    ? Self.redirect("301 Moved Permanently", to: trap)
                    : Self.redirect("302 Found", to: "/second")
            }) { client, server, _ in
                await Self.expectRefused(HTTPClientRequest(url: Self.url(server)), client)
            }
        }

        @Test func otherSchemesAreRefusedWithTheSameError() async throws {
            for location in ["file:///etc/passwd", "ftp://127.0.0.1/x", "HTTP+UNIX://%2Ftmp%2Fx.sock/"] {
                try await Self.withRedirector(script: { _, _, _ in Self.redirect("302 Found", to: location) }) {
                    client, server, _ in
                    await Self.expectRefused(HTTPClientRequest(url: Self.url(server)), client)
                }
            }
        }

        @Test func aRewritingHookCannotOpenAUnixSocketEither() async throws {
            let trapPath = Lock<String?>(nil)
            var configuration = HTTPClientConfiguration()
            configuration.redirects = .rewrite(max: 5) { hop in
                try HTTPURL(trapPath.withLock { $0 } ?? hop.to.description)
            }
            try await Self.withRedirector(
                configuration: configuration,
                script: { _, _, _ in
                    Self.redirect("302 Found", to: "/elsewhere")
                }
            ) { client, server, trap in
                trapPath.withLock { $0 = trap.url }
                await Self.expectRefused(HTTPClientRequest(url: Self.url(server)), client)
            }
        }

        @Test func aRewritingHookMayStopAtTheRedirect() async throws {
            var configuration = HTTPClientConfiguration()
            configuration.redirects = .rewrite(max: 5) { _ in nil }
            try await Self.withRedirector(
                configuration: configuration,
                script: { _, _, _ in
                    Self.redirect("302 Found", to: "/elsewhere")
                }
            ) { client, server, _ in
                let response = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                #expect(response.status.code == 302)
            }
        }

        @Test func aRequestTheCallerSendsToASocketMayBeRedirectedOnThatSocket() async throws {
            // The caller chose the socket: a relative redirect stays on it.
            let group = try EventLoopGroup(loopCount: 1)
            let path = "/tmp/wire-origin-\(UInt32.random(in: 0...UInt32.max)).sock"
            let server = try await ScriptedServer.start(on: group.next(), address: try SocketAddress(unixPath: path)) {
                _, _, head in
                head.hasPrefix("GET /a ") ? Self.redirect("302 Found", to: "/b") : .respond(ScriptedServer.ok("on the socket"))
            }
            let client = try HTTPClient(group: group)
            let encoded = Self.encode(path)
            let response = try await client.execute(HTTPClientRequest(url: "http+unix://\(encoded)/a"))
            #expect(response.status.code == 200)
            #expect(try await response.body.collect(upTo: 100) == ByteBuffer(string: "on the socket"))
            #expect(response.metrics.snapshot.redirects == 1)
            await client.shutdown()
            try await server.close()
            await group.shutdownGracefully()
        }

        @Test func aLocationFromTheCallersSocketToAnotherSocketIsRefused() async throws {
            let group = try EventLoopGroup(loopCount: 1)
            let path = "/tmp/wire-origin-\(UInt32.random(in: 0...UInt32.max)).sock"
            let otherPath = "/tmp/wire-other-\(UInt32.random(in: 0...UInt32.max)).sock"
            let other = try await ScriptedServer.start(on: group.next(), address: try SocketAddress(unixPath: otherPath)) {
                _, _, _ in
                .respond(ScriptedServer.ok("trapped"))
            }
            let origin = try await ScriptedServer.start(on: group.next(), address: try SocketAddress(unixPath: path)) {
                _, request, _ in
                request == 0 ? Self.redirect("302 Found", to: "//\(Self.encode(otherPath))/x") : .respond(ScriptedServer.ok())
            }
            let client = try HTTPClient(group: group)
            await Self.expectRefused(HTTPClientRequest(url: "http+unix://\(Self.encode(path))/a"), client)
            #expect(try await other.connectionCount() == 0)
            await client.shutdown()
            try await origin.close()
            try await other.close()
            await group.shutdownGracefully()
        }

        @Test func wireGetExitsOneWithCurlsWords() async throws {
            try await Self.withRedirector(script: { trap, _, _ in Self.redirect("302 Found", to: trap) }) { _, server, _ in
                let run = try await WireToolRunner.run(["get", "-L", Self.url(server)])
                #expect(run.status == 1)
                #expect(run.errors.contains("protocol \"http+unix\" not allowed in a redirect"), "\(run.errors)")
                #expect(run.output.isEmpty)
            }
        }
    }
}
