import Testing
import Wire

extension IOSuite {
    /// Settings that cannot work are refused with a typed error naming them when the client is
    /// made, never by a trap at the first request.
    @Suite struct HTTPClientConfigurationTests {
        /// One refused setting: what to change, and the field the error must name.
        struct Case: Sendable, CustomStringConvertible {
            let field: String
            let change: @Sendable (inout HTTPClientConfiguration) -> Void
            var description: String { field }
        }

        static let refused: [Case] = [
            Case(field: "maxConnectionsPerHost") { $0.maxConnectionsPerHost = 0 },
            Case(field: "maxConnectionsPerHost") { $0.maxConnectionsPerHost = -3 },
            Case(field: "pipelining.maxInFlight") { $0.pipelining = .enabled(maxInFlight: 1) },
            Case(field: "pipelining.maxInFlight") { $0.pipelining = .enabled(maxInFlight: 0) },
            Case(field: "pipelining.maxInFlight") { $0.pipelining.maxInFlight = 0 },
            Case(field: "connectTimeout") { $0.connectTimeout = .zero },
            Case(field: "readTimeout") { $0.readTimeout = .seconds(-1) },
            Case(field: "idleTimeout") { $0.idleTimeout = .milliseconds(-1) },
            Case(field: "expectContinueTimeout") { $0.expectContinueTimeout = .seconds(-1) },
            Case(field: "redirects.follow(max:)") { $0.redirects = .follow(max: -1) },
            Case(field: "expectContinueThreshold") { $0.expectContinueThreshold = -1 },
            Case(field: "parserConfiguration.maxHeaderCount") { $0.parserConfiguration.maxHeaderCount = 0 },
            Case(field: "parserConfiguration.maxBodySize") { $0.parserConfiguration.maxBodySize = -1 },
        ]

        @Test(arguments: refused)
        func aSettingThatCannotWorkIsRefusedByInitNamingTheField(_ refused: Case) async throws {
            let group = try EventLoopGroup(loopCount: 1)
            defer { group.shutdown() }
            var configuration = HTTPClientConfiguration()
            refused.change(&configuration)
            do {
                let client = try HTTPClient(configuration: configuration, group: group)
                Issue.record("a client was made with an unworkable \(refused.field)")
                await client.shutdown()
            } catch {
                #expect(error.code == .invalidConfiguration)
                #expect(error.configurationError?.field == refused.field)
                #expect(error.description.contains(refused.field))
            }
            #expect(throws: HTTPClientError.self) { try configuration.validate() }
        }

        @Test func theDefaultsAndTheSmallestWorkableSettingsAreAccepted() throws {
            try HTTPClientConfiguration().validate()
            var smallest = HTTPClientConfiguration()
            smallest.maxConnectionsPerHost = 1
            smallest.pipelining = .enabled(maxInFlight: 2)
            smallest.idleTimeout = .zero
            smallest.expectContinueTimeout = .zero
            smallest.redirects = .follow(max: 0)
            smallest.expectContinueThreshold = 0
            smallest.parserConfiguration.maxBodySize = 0
            try smallest.validate()
            #expect(HTTPClientConfiguration.Pipelining.enabled(maxInFlight: 1) != .disabled)
        }

        @Test func aNegativeStreamLengthFailsTheRequestBeforeAnyConnection() async throws {
            try await HTTPClientFaultTests.withServer(script: { _, _, _ in .respond(ScriptedServer.ok()) }) { client, server in
                let (chunks, continuation) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
                continuation.finish()
                let request = HTTPClientRequest(
                    url: HTTPClientFaultTests.url(server), method: .post, body: .stream(length: -1, chunks))
                let error = await #expect(throws: HTTPClientError.self) { try await client.execute(request) }
                #expect(error?.code == .invalidRequest)
                #expect(error?.detail.contains("-1") == true)
                #expect(try await server.connectionCount() == 0)
                // The client is unharmed: the next request goes through.
                let response = try await client.execute(HTTPClientRequest(url: HTTPClientFaultTests.url(server)))
                #expect(try await response.body.collect(upTo: 10) == ByteBuffer(string: "ok"))
            }
        }
    }
}
