import FoundationEssentials
import Synchronization
@_spi(Locking) import Wire
import WireClient

/// A clock whose time moves only when the test advances it.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let time = Lock(Duration.zero)
    var now: Instant { Instant(offset: time.withLock { $0 }) }
    var minimumResolution: Duration { .nanoseconds(1) }
    func advance(by duration: Duration) { time.withLock { $0 += duration } }
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        // Never used: the code under test does not sleep.
        throw CancellationError()
    }
}

enum Fixtures {
    static let url = URL(string: "http://127.0.0.1/resource")!

    static func request(_ method: String = "GET") -> ClientRequest { ClientRequest(url: url, method: method) }

    static func response(_ status: Int, retryAfter: String? = nil) -> ClientResponse {
        var response = ClientResponse(url: url, statusCode: status)
        if let retryAfter { response.headers.add(name: "Retry-After", value: retryAfter) }
        return response
    }

    static func statusError(_ response: ClientResponse) -> ClientError {
        ClientError(.unacceptableStatusCode(response.statusCode), response: response)
    }
}

/// A record of who was asked, in order.
final class Log: Sendable {
    private let storage = Lock<[String]>([])
    func append(_ entry: String) { storage.withLock { $0.append(entry) } }
    var entries: [String] { storage.withLock { $0 } }
}
