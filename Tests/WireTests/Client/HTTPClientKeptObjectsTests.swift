import Testing
import Wire

extension IOSuite {
    /// A connection keeps the exchange and the body channel of its last response for the next one, and reuses them once
    /// nothing else holds them: a body its reader still holds keeps its own bytes, however many responses follow on
    /// the same connection, and a body read and dropped hands its channel on intact.
    @Suite struct HTTPClientKeptObjectsTests {
        static func text(_ buffer: ByteBuffer) -> String { String(decoding: buffer.readableBytesArray, as: UTF8.self) }

        @Test(arguments: [false, true])
        func aHeldBodyKeepsItsBytesWhileLaterResponsesArrive(onLoop: Bool) async throws {
            try await withLoopbackRig { rig in
                let port = try await rig.server { request, response in
                    try await response.respond(
                        HTTPResponseHead(status: .ok), body: ByteBuffer(string: "body of \(request.head.target)"))
                }
                var configuration = HTTPClientConfiguration()
                configuration.maxConnectionsPerHost = 1
                let client = try rig.client(configuration)
                let url = "http://127.0.0.1:\(port)"
                @Sendable func exchanges() async throws {
                    // Held unread while three more responses come over the same connection.
                    let held = try await client.execute(HTTPClientRequest(url: url + "/held"))
                    for index in 0..<3 {
                        let response = try await client.execute(HTTPClientRequest(url: url + "/read/\(index)"))
                        #expect(response.metrics.snapshot.isReusedConnection)
                        #expect(Self.text(try await response.body.collect(upTo: 1024)) == "body of /read/\(index)")
                    }
                    let next = try await client.execute(HTTPClientRequest(url: url + "/next"))
                    #expect(next.metrics.snapshot.connection == held.metrics.snapshot.connection)
                    #expect(Self.text(try await held.body.collect(upTo: 1024)) == "body of /held")
                    #expect(Self.text(try await next.body.collect(upTo: 1024)) == "body of /next")
                }
                if onLoop {
                    // A task on the client's loop reads each body where the loop delivers it.
                    try await Task(executorPreference: rig.group.next()) { try await exchanges() }.value
                } else {
                    try await exchanges()
                }
            }
        }
    }
}
