import Wire

/// A raw HTTP/1.1 server for fault scenarios: it reads each request (head, plus a
/// Content-Length body; the script sees the head as soon as it is complete) and answers as its
/// script says: a reply, a reply then close, close without a word, reset, or silence. It runs on
/// a Wire loop, on loopback or a Unix socket.
struct ScriptedServer: Sendable {
    /// What to do with one request.
    enum Reply: Sendable {
        case respond(String)
        case respondAndClose(String)
        case close
        case reset
        case silence
        /// Hold this response back (a pipelining test: the client must send more first).
        case queue(String)
        /// Send every held-back response and then this one, in one write.
        case flush(String)
        /// Send every held-back response, then end the stream.
        case flushAndClose
        /// Answer once the head and the first body bytes are in, without waiting for the rest
        /// of the body, and read nothing more: a server refusing an upload (413, 401) while the
        /// client is still sending it, so the client's writes back up.
        case respondBeforeBody(String)
    }

    /// The script: connection number and request number on that connection (both from 0), and
    /// the request head as text.
    typealias Script = @Sendable (_ connection: Int, _ request: Int, _ head: String) -> Reply

    private let core: LoopBound<Core>
    let address: SocketAddress

    static func start(
        on loop: EventLoop, address: SocketAddress = try! SocketAddress(ipAddress: "127.0.0.1", port: 0),
        script: @escaping Script
    ) async throws -> ScriptedServer {
        let core = try await loop.submit { () throws -> LoopBound<Core> in
            LoopBound(try Core(loop: loop, address: address, script: script), loop: loop)
        }
        let bound = try await loop.submit { core.value.listener.localAddress }
        return ScriptedServer(core: core, address: bound)
    }

    /// Connections accepted so far.
    func connectionCount() async throws -> Int {
        let core = self.core
        return try await core.loop.submit { core.value.accepted }
    }

    /// Sends every held-back response on every connection.
    func flushQueued() async throws {
        let core = self.core
        try await core.loop.submit { for connection in core.value.connections { connection.flush(then: nil) } }
    }

    /// The responses held back now, over every connection: a test flushes once its requests have arrived.
    func queuedCount() async throws -> Int {
        let core = self.core
        return try await core.loop.submit { core.value.connections.reduce(0) { $0 + $1.queued.count } }
    }

    /// The most requests one connection found in a single read: above 1, the client pipelined.
    func maxRequestsPerRead() async throws -> Int {
        let core = self.core
        return try await core.loop.submit { core.value.connections.map(\.maxRequestsPerRead).max() ?? 0 }
    }

    /// Closes every connection accepted so far and keeps listening: a server's idle timeout.
    func closeConnections() async throws {
        let core = self.core
        try await core.loop.submit {
            for connection in core.value.connections { connection.stream.close(error: nil) }
        }
    }

    /// Stops listening and closes every connection.
    func close() async throws {
        let core = self.core
        try await core.loop.submit { core.value.close() }
    }

    /// A response with a Content-Length body.
    static func ok(_ body: String = "ok", extraHeaders: String = "") -> String {
        "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\(extraHeaders)\r\n\(body)"
    }

    final class Core {
        let listener: SocketListener
        var connections: [Connection] = []
        var accepted = 0

        init(loop: EventLoop, address: SocketAddress, script: @escaping Script) throws {
            var accept: ((Socket) -> Void)?
            listener = try SocketListener(bindingTo: address, on: loop, onAccept: { socket in accept?(socket) })
            accept = { [unowned self] socket in
                guard let stream = try? SocketStream(socket: socket, on: loop) else { return }
                let connection = Connection(index: accepted, stream: stream, script: script)
                accepted += 1
                connections.append(connection)
            }
        }

        func close() {
            listener.close()
            for connection in connections { connection.stream.close(error: nil) }
            connections.removeAll()
        }
    }

    final class Connection: ByteStreamDelegate {
        let index: Int
        let stream: SocketStream
        let script: Script
        var pending: [UInt8] = []
        var requests = 0
        var queued: [String] = []
        var maxRequestsPerRead = 0
        /// The script's answer to the head being read, kept while its body comes in.
        var reply: Reply?

        init(index: Int, stream: SocketStream, script: @escaping Script) {
            self.index = index
            self.stream = stream
            self.script = script
            stream.delegate = self
        }

        func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
            pending += buffer.readableBytesArray
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            var requestsInThisRead = 0
            while let end = headEnd() {
                let head = String(decoding: pending[..<end], as: UTF8.self)
                let length =
                    head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].filter { $0 != " " && $0 != "\t" }) } ?? 0
                // A head asking `Expect: 100-continue` is answered before its body, as a server
                // that refuses it would: the client then must not send the body at all.
                let expectsContinue = head.lowercased().contains("\r\nexpect: 100-continue")
                let reply = self.reply ?? script(index, requests, head)
                self.reply = reply
                if expectsContinue {
                    pending.removeFirst(end + 4)
                } else if case .respondBeforeBody = reply {
                    guard length == 0 || pending.count > end + 4 else { return }
                    pending.removeAll()
                } else {
                    guard pending.count >= end + 4 + length else { return }
                    pending.removeFirst(end + 4 + length)
                }
                self.reply = nil
                requests += 1
                requestsInThisRead += 1
                maxRequestsPerRead = max(maxRequestsPerRead, requestsInThisRead)
                switch reply {
                case .respond(let text): self.stream.write([ByteBuffer(string: text)])
                case .respondAndClose(let text):
                    self.stream.write([ByteBuffer(string: text)])
                    self.stream.shutdownWrite()
                case .close: self.stream.close(error: nil); return
                case .reset:
                    try? self.stream.socketForTesting.setOption(.linger(seconds: 0))
                    self.stream.close(error: nil)
                    return
                case .silence: return
                case .queue(let text): queued.append(text)
                case .flush(let text): flush(then: text)
                case .flushAndClose:
                    flush(then: nil)
                    self.stream.shutdownWrite()
                case .respondBeforeBody(let text):
                    self.stream.write([ByteBuffer(string: text)])
                    self.stream.setReadingEnabled(false)
                    return
                }
            }
        }

        func flush(then text: String?) {
            let all = queued.joined() + (text ?? "")
            queued.removeAll()
            if !all.isEmpty { stream.write([ByteBuffer(string: all)]) }
        }

        private func headEnd() -> Int? {
            guard pending.count >= 4 else { return nil }
            for index in 0...(pending.count - 4)
            where pending[index] == 13 && pending[index + 1] == 10 && pending[index + 2] == 13 && pending[index + 3] == 10 {
                return index
            }
            return nil
        }

        func streamDidReachEnd(_ stream: any ByteStream) { self.stream.close(error: nil) }
        func streamDidDrainWrites(_ stream: any ByteStream) {}
        func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {}
    }
}
