import Foundation
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireClient

/// A Wire `HTTPServer` on 127.0.0.1, port 0, with a loop group of its own, answering with a closure; for the
/// session tests. Records every request's head and body.
struct LoopbackServer: Sendable {
    let server: HTTPServer
    let group: EventLoopGroup
    let port: Int
    let recorded: Recorder<Recorded>

    /// One request as the server saw it.
    struct Recorded: Sendable {
        var method: String
        var target: String
        var headers: HTTPHeaders
        var body: [UInt8]
    }

    /// Starts a server whose `handler` gets each request (body already read) and answers through the writer.
    /// `pacing`, when given, runs after each chunk of a body with the count read so far: a test holds the reading there.
    static func start(
        pacing: (@Sendable (_ bodyBytesRead: Int) async -> Void)? = nil,
        _ handler: @escaping @Sendable (Recorded, HTTPResponseWriter) async throws -> Void
    ) async throws -> LoopbackServer {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "wireclient-test-server")
        let log = Recorder<Recorded>()
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0)),
            group: group
        ) { request, writer in
            var body = ByteBuffer()
            if let pacing {
                for try await chunk in request.body {
                    body.writeBuffer(chunk)
                    await pacing(body.readableBytes)
                }
            } else {
                body = try await request.body.collect(upTo: 256 << 20)
            }
            let recorded = Recorded(
                method: request.method.rawValue, target: request.target, headers: request.head.headers,
                body: body.readableBytesArray)
            log.record(recorded)
            try await handler(recorded, writer)
        }
        let address = try await server.start()
        return LoopbackServer(server: server, group: group, port: address.port!, recorded: log)
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// The requests seen so far.
    var requests: [Recorded] { recorded.all }

    /// Stops the server and its loops.
    func stop() async {
        await server.shutdown(gracePeriod: .seconds(1))
        await group.shutdownGracefully()
    }

    /// Runs `body` with a started server, stopping it afterwards whatever happens.
    static func with<T>(
        pacing: (@Sendable (_ bodyBytesRead: Int) async -> Void)? = nil,
        _ handler: @escaping @Sendable (Recorded, HTTPResponseWriter) async throws -> Void,
        _ body: (LoopbackServer) async throws -> T
    ) async throws -> T {
        let server = try await start(pacing: pacing, handler)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }
}

extension HTTPResponseWriter {
    /// Answers `status` with `body` and the given fields.
    func reply(_ status: Int, _ body: String = "", headers: HTTPHeaders = HTTPHeaders()) async throws {
        try await respond(HTTPResponseHead(status: HTTPStatus(code: status), headers: headers), body: ByteBuffer(string: body))
    }
}

/// Collects what happens, in order, from any thread.
final class Recorder<Element: Sendable>: Sendable {
    private let items = Lock<[Element]>([])
    /// Appends `item`.
    func record(_ item: Element) { items.withLock { $0.append(item) } }
    /// Everything recorded so far.
    var all: [Element] { items.withLock { $0 } }
}

/// An integer shared by escaping closures (an `Atomic` cannot be captured by one).
final class Counter: Sendable {
    private let value: Atomic<Int>
    init(_ initial: Int = 0) { value = Atomic(initial) }
    /// Adds `amount`; returns the new value.
    @discardableResult func add(_ amount: Int = 1) -> Int { value.add(amount, ordering: .relaxed).newValue }
    /// Sets the value.
    func set(_ newValue: Int) { value.store(newValue, ordering: .releasing) }
    /// The value now.
    var current: Int { value.load(ordering: .acquiring) }
}

/// A `SessionEventMonitor` that records event names.
struct RecordingMonitor: SessionEventMonitor {
    let recorder: Recorder<String>
    func manager(_ manager: SessionManager, didEmit event: TaskEvent) {
        switch event {
        case .didResume(let task): recorder.record("didResume#\(task.taskIdentifier)")
        case .didSuspend(let task): recorder.record("didSuspend#\(task.taskIdentifier)")
        case .didComplete(let task, _): recorder.record("didComplete#\(task.taskIdentifier)")
        case .sessionDidInvalidate: recorder.record("sessionDidInvalidate")
        case .downloadDidMoveFile(let task, _): recorder.record("didMove#\(task.taskIdentifier)")
        case .downloadDidFailToMoveFile(let task, _): recorder.record("didFailToMove#\(task.taskIdentifier)")
        }
    }
}

extension LoopbackServer {
    /// Connections the server has open now: the census that shows a client's connections were closed (the
    /// server sees the client's close and lets its side go).
    var openConnections: Int { server.connectionCount }
}
