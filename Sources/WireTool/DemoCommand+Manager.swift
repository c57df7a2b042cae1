import FoundationEssentials
import Synchronization
import Wire
import WireClient

/// The second half of `wire demo`: WireClient's `HTTPSessionManager` against the same embedded server, a JSON
/// answer decoded into a `Decodable` type, a validation failure, a 503 retried by the manager's retry policy, and
/// the task events as they happen.
extension DemoCommand {
    /// What `/user` answers, decoded.
    struct User: Decodable, Sendable, CustomStringConvertible {
        let id: Int
        let name: String
        var description: String { "User(id: \(id), name: \"\(name)\")" }
    }

    /// Prints each task event on the manager's delegate queue, as it happens.
    struct EventPrinter: SessionEventMonitor {
        func manager(_ manager: SessionManager, didEmit event: TaskEvent) {
            switch event {
            case .didResume(let task): print("    event: task #\(task.taskIdentifier) did resume")
            case .didSuspend(let task): print("    event: task #\(task.taskIdentifier) did suspend")
            case .didComplete(let task, let info):
                print("    event: task #\(task.taskIdentifier) did complete" + (info.error.map { " with \($0.code)" } ?? ""))
            case .sessionDidInvalidate: print("    event: session did invalidate")
            case .downloadDidMoveFile(let task, let path):
                print("    event: task #\(task.taskIdentifier) moved its file to \(path)")
            case .downloadDidFailToMoveFile(let task, _): print("    event: task #\(task.taskIdentifier) could not move its file")
            }
        }
    }

    /// How many times `/flaky` was asked: the first answer is 503, the rest 200.
    static let flakyRequests = Atomic<Int>(0)

    /// Runs the manager's part of the demo against `base`; returns the number of unexpected outcomes.
    static func runManager(base: String) async throws -> Int {
        print("")
        print("WireClient: an HTTPSessionManager on \(base)/ (retry policy: transient statuses, 2 retries)")
        let manager = try HTTPSessionManager(baseURL: base + "/")
        manager.session.eventMonitors = [EventPrinter()]
        manager.session.interceptor = RetryInterceptor(policy: RetryPolicy(baseDelay: .milliseconds(20), jitter: .none))
        var failures = 0

        manager.responseSerializer = DecodableResponseSerializer(User.self)
        do {
            let result = try await manager.get("user")
            print("  GET user → \(result.response?.statusCode ?? 0), decoded \(result.value.map { "\($0)" } ?? "nothing")")
        } catch {
            failures += 1
            print("  GET user → error: \(error)")
        }

        manager.responseSerializer = JSONResponseSerializer()
        do {
            _ = try await manager.get("hello")
            failures += 1
            print("  GET hello → accepted, but text/plain is not JSON")
        } catch {
            print(
                "  GET hello → refused by validation: \(error.code) (the body stays with the error: "
                    + "\(error.responseData?.count ?? 0) bytes)")
        }

        do {
            let result = try await manager.get("flaky")
            print(
                "  GET flaky → \(result.response?.statusCode ?? 0) after \(flakyRequests.load(ordering: .relaxed)) attempts "
                    + "(the first answer was 503)")
        } catch {
            failures += 1
            print("  GET flaky → error: \(error)")
        }
        return failures
    }

    /// `/user` and `/flaky` of the demo's server.
    static func handleManagerRoutes(_ target: String, _ response: HTTPResponseWriter) async throws -> Bool {
        switch target {
        case "/user":
            try await response.respond(
                HTTPResponseHead(status: .ok, headers: ["Content-Type": "application/json"]),
                body: ByteBuffer(string: #"{"id":1,"name":"Ada"}"#))
        case "/flaky":
            let attempt = flakyRequests.add(1, ordering: .relaxed).newValue
            let status: HTTPStatus = attempt == 1 ? .serviceUnavailable : .ok
            try await response.respond(
                HTTPResponseHead(status: status, headers: ["Content-Type": "application/json"]),
                body: ByteBuffer(string: attempt == 1 ? #"{"busy":true}"# : #"{"ok":true}"#))
        default:
            return false
        }
        return true
    }
}
