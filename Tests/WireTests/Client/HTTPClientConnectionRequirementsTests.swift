import Synchronization
import Testing
@_spi(Locking) import Wire

extension IOSuite {
    /// `ConnectionRequirements`: an admission check that refuses closes the new connection before any request
    /// byte goes out, with `.connectionNotAdmitted`; requests with other requirements (another traffic class,
    /// another admission object) never share a connection.
    @Suite struct HTTPClientConnectionRequirementsTests {
        /// Refuses everything, and remembers the addresses it was asked about.
        final class RefuseAll: ConnectionAdmission {
            let asked = Lock<[(SocketAddress, SocketAddress)]>([])
            func refusal(local: SocketAddress, remote: SocketAddress) -> String? {
                asked.withLock { $0.append((local, remote)) }
                return "refused by the test"
            }
        }

        final class AdmitAll: ConnectionAdmission {
            func refusal(local: SocketAddress, remote: SocketAddress) -> String? { nil }
        }

        @Test func aRefusedConnectionCarriesNoRequest() async throws {
            let heads = Lock<[String]>([])
            try await HTTPClientFaultTests.withServer(script: { _, _, head in
                heads.withLock { $0.append(head) }
                return .respond(ScriptedServer.ok())
            }) { client, server async throws in
                let refuse = RefuseAll()
                var request = HTTPClientRequest(url: HTTPClientFaultTests.url(server))
                request.connectionRequirements.admission = refuse
                do {
                    _ = try await client.execute(request)
                    Issue.record("a refused connection carried the request")
                } catch let error as HTTPClientError {
                    #expect(error.code == .connectionNotAdmitted)
                    #expect(
                        error.detail.contains("refused by the test") && error.detail.contains("127.0.0.1:\(server.address.port!)")
                    )
                }
                let asked = refuse.asked.withLock { $0 }
                #expect(asked.count == 1 && asked.first?.1 == server.address && asked.first?.0.host == "127.0.0.1")
                // The server accepted the connection (the check runs once it is connected) and saw no request on it.
                #expect(try await server.connectionCount() == 1)
                #expect(heads.withLock { $0.isEmpty })
            }
        }

        @Test func otherRequirementsGetOtherConnections() async throws {
            try await HTTPClientFaultTests.withServer(script: { connection, _, _ in
                .respond(ScriptedServer.ok("\(connection)"))
            }) { client, server async throws in
                let admitAll = AdmitAll()
                func connection(_ requirements: ConnectionRequirements) async throws -> ByteBuffer {
                    var request = HTTPClientRequest(url: HTTPClientFaultTests.url(server))
                    request.connectionRequirements = requirements
                    let response = try await client.execute(request)
                    return try await response.body.collect(upTo: 100)
                }
                #expect(try await connection(ConnectionRequirements()) == ByteBuffer(string: "0"))
                #expect(try await connection(ConnectionRequirements(trafficClass: 0x20)) == ByteBuffer(string: "1"))
                #expect(try await connection(ConnectionRequirements(trafficClass: 0x20)) == ByteBuffer(string: "1"))
                #expect(try await connection(ConnectionRequirements(admission: admitAll)) == ByteBuffer(string: "2"))
                #expect(try await connection(ConnectionRequirements(admission: AdmitAll())) == ByteBuffer(string: "3"))
                #expect(try await connection(ConnectionRequirements(admission: admitAll)) == ByteBuffer(string: "2"))
                #expect(try await connection(ConnectionRequirements()) == ByteBuffer(string: "0"))
            }
        }
    }
}
