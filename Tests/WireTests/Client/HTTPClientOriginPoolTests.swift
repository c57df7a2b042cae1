import Testing
import Wire

extension IOSuite {
    /// The client finds the pool of a request's origin from the URL's scheme, host and port, comparing them with the
    /// last pool's before building a key: requests that alternate between origins differing in one of them each
    /// reach their own server, on connections of their own.
    @Suite struct HTTPClientOriginPoolTests {
        @Test func requestsAlternatingBetweenOriginsEachReachTheirOwn() async throws {
            // Each origin after each other one: after the same port on another host, the same host on another port.
            let order = ["first", "third", "first", "second", "third", "second", "first", "first"]
            let (seen, pools) = try await withLoopbackRig { rig in
                func answering(_ name: String) -> @Sendable (HTTPServerRequest, HTTPResponseWriter) async throws -> Void {
                    { _, response in try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: name)) }
                }
                let firstPort = try await rig.server(handler: answering("first"))
                let secondPort = try await rig.server(handler: answering("second"))
                // Another host with the first one's port: only the host tells the two apart.
                _ = try await rig.server(host: "127.0.0.2", port: firstPort, handler: answering("third"))
                let urls = [
                    "first": "http://127.0.0.1:\(firstPort)/", "second": "http://127.0.0.1:\(secondPort)/",
                    "third": "http://127.0.0.2:\(firstPort)/",
                ]
                let client = try rig.client()
                var seen: [String] = []
                for name in order {
                    let request = HTTPClientRequest(url: urls[name]!)
                    let body = try await client.execute(request).body.collect(upTo: 1024)
                    seen.append(String(decoding: body.readableBytesArray, as: UTF8.self))
                }
                return (seen, client.poolSnapshots())
            }
            #expect(seen == order)
            #expect(pools.count == 3)
            #expect(pools.allSatisfy { $0.connectionsOpened == 1 }, "each origin keeps its one connection")
        }
    }
}
