import Testing
import Wire

extension IOSuite {
    /// The hooks a response body gives its connection (more wanted, abandoned) act on that response only. The
    /// consumer's hop to the loop can arrive after the connection finished the response and moved on to the next.
    @Suite struct HTTP1ClientConnectionBodyHooksTests {
        typealias Start = HTTP1ClientConnection.ResponseStart

        /// Starts a GET on `connection`; loop only.
        static func get(_ connection: HTTP1ClientConnection) -> Promise<Start, HTTPClientError> {
            connection.start(
                head: Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), inlineBody: nil, method: .get, keepAlive: true,
                requestComplete: true, readTimeout: .seconds(10), metrics: HTTPClientMetrics(start: .now())
            ).0
        }

        /// The consumer of the first response drops its body just before the read that ends it and brings the second
        /// response's head: the cancel hop runs after that read. It used to fail the second response with `.cancelled`.
        /// Pipelined, both requests are in flight before the read; reused, the second starts once the first ended.
        @Test(arguments: [true, false])
        func aBodyAbandonedAsItsResponseEndsLeavesTheNextResponseAlone(pipelined: Bool) async throws {
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "body-hooks")
            let loop = group.next()
            try await withTimeout(seconds: 20) {
                let (connection, stream, first, second) = try await loop.submit {
                    let stream = PeerStream(on: loop)
                    let connection = HTTP1ClientConnection(stream: stream, parserConfiguration: HTTP1ParserConfiguration())
                    let first = Self.get(connection)
                    let second = pipelined ? Self.get(connection) : nil
                    stream.receive("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfir")
                    return (LoopBound(connection, loop: loop), LoopBound(stream, loop: loop), first, second)
                }
                let firstResponse = try await first.get()
                let secondPromise = try await loop.submit { () -> Promise<Start, HTTPClientError> in
                    // The consumer lets go: its hop to the connection is queued behind this job...
                    firstResponse.body.channel.cancel()
                    // ...and this read, ending the first response, runs before it.
                    stream.value.receive("st")
                    let second = second ?? Self.get(connection.value)
                    stream.value.receive("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsec")
                    return second
                }
                let secondResponse = try await secondPromise.get()
                try await loop.submit { stream.value.receive("ond") }
                #expect(try await secondResponse.body.collect(upTo: 100) == ByteBuffer(string: "second"))
                #expect(try await loop.submit { connection.value.isUsable })
            }
            await group.shutdownGracefully()
        }

        /// A body that paused reading (its buffer passed the high-water mark) and ended in the same read lifts the
        /// pause: the next response's bytes belong to another body. Its consumer may never read, so its demand cannot
        /// be what resumes the connection; the reused connection would otherwise never read again.
        @Test func aBodyThatPausedReadingAndEndedInTheSameReadLiftsThePause() async throws {
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "body-hooks")
            let loop = group.next()
            try await withTimeout(seconds: 20) {
                let size = 512 * 1024
                let (stream, first) = try await loop.submit {
                    let stream = PeerStream(on: loop)
                    let connection = HTTP1ClientConnection(stream: stream, parserConfiguration: HTTP1ParserConfiguration())
                    let first = Self.get(connection)
                    stream.receive("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n" + String(repeating: "a", count: size))
                    return (LoopBound(stream, loop: loop), first)
                }
                // The consumer drops the body unread.
                try await first.get().body.channel.cancel()
                #expect(try await loop.submit { stream.value.readingEnabled })
            }
            await group.shutdownGracefully()
        }
    }
}
