import Testing
import Wire

extension IOSuite {
    /// The `Host` field the client writes (RFC 9112 §3.2): the URL's host and port, the port left out when it is the
    /// scheme's, an IPv6 literal in brackets, on a new connection and on a pooled one alike (a pool to one origin works
    /// the value out once, and every request on it must still carry its own URL's).
    @Suite struct HTTPClientHostFieldTests {
        static func text(_ buffer: ByteBuffer) -> String { String(decoding: buffer.readableBytesArray, as: UTF8.self) }

        @Test(arguments: ["127.0.0.1", "::1"])
        func theHostFieldNamesTheURLsHostAndPort(host: String) async throws {
            let (seen, authority, opened) = try await withLoopbackRig { rig in
                let port = try await rig.server(host: host) { request, response in
                    let headers = request.head.headers
                    let fields = headers.indices.filter { headers.name(at: $0).lowercased() == "host" }
                        .map { headers.value(at: $0) }.joined(separator: " | ")
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: fields))
                }
                let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
                let client = try rig.client()
                var seen: [String] = []
                for path in ["/a", "/b?c=d", "/e"] {
                    let response = try await client.execute(HTTPClientRequest(url: "http://\(authority)\(path)"))
                    seen.append(Self.text(try await response.body.collect(upTo: 1024)))
                }
                // A request with its own Host keeps it, on the pooled connection too.
                var own = HTTPClientRequest(url: "http://\(authority)/f")
                own.headers.add(name: "Host", value: "example.org")
                seen.append(Self.text(try await client.execute(own).body.collect(upTo: 1024)))
                return (seen, authority, client.poolSnapshots().map(\.connectionsOpened).reduce(0, +))
            }
            #expect(seen == [authority, authority, authority, "example.org"])
            #expect(opened == 1, "the four requests shared one connection")
        }
    }
}
