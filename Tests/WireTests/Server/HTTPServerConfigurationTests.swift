import Testing
import Wire

extension IOSuite {
    /// Server settings that cannot work are refused by `start()` before anything listens.
    @Suite struct HTTPServerConfigurationTests {
        /// One refused setting: what to change, and the field the error must name.
        struct Case: Sendable, CustomStringConvertible {
            let field: String
            let change: @Sendable (inout HTTPServerConfiguration) -> Void
            var description: String { field }
        }

        static let refused: [Case] = [
            Case(field: "backlog") { $0.backlog = -1 },
            Case(field: "maxConnections") { $0.maxConnections = 0 },
            Case(field: "headerReadTimeout") { $0.headerReadTimeout = .zero },
            Case(field: "idleTimeout") { $0.idleTimeout = .seconds(-1) },
            Case(field: "bodyReadTimeout") { $0.bodyReadTimeout = .zero },
            Case(field: "sendTimeout") { $0.sendTimeout = .seconds(-1) },
            Case(field: "lingerTimeout") { $0.lingerTimeout = .seconds(-1) },
            Case(field: "handshakeTimeout") { $0.handshakeTimeout = .zero },
            Case(field: "parser.maxStartLineLength") { $0.parser.maxStartLineLength = 0 },
        ]

        @Test(arguments: refused)
        func aSettingThatCannotWorkIsRefusedByStartNamingTheField(_ refused: Case) async throws {
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "test-server")
            var configuration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
            refused.change(&configuration)
            let server = HTTPServer(configuration: configuration, group: group) { _, response in
                try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer())
            }
            do {
                _ = try await server.start()
                Issue.record("a server started with an unworkable \(refused.field)")
            } catch let error as HTTPServerError {
                #expect(error.kind == .invalidConfiguration)
                #expect((error.underlying as? ConfigurationError)?.field == refused.field)
                #expect(server.localAddress == nil)
            }
            await server.shutdown(gracePeriod: .zero)
            await group.shutdownGracefully()
        }
    }
}
