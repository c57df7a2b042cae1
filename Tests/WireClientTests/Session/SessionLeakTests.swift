import Foundation
import Synchronization
import Testing
import Wire
import WireClient
import WireTestSupport

/// Issue 13's quality bar: bad input gets a typed error and leaks nothing. Each case runs a task into one failure, then
/// invalidates the manager; afterwards the process has the descriptors it had before (the manager's connections are
/// closed, and the server's ends of them), no download is left in WireClient's temporary folder, and the manager holds
/// no task.
@Suite(.serialized, .exclusiveIO)
struct SessionLeakTests {
    enum Case: String, CaseIterable, Sendable {
        case malformedJSON, wrongContentType, bodyOverTheLimit, stallMidBody, redirectLoop, undecodableRetryAfter
        case unwritableDestination
    }

    /// The answers the cases need but the stall, which `FaultPeer` plays (ten of a thousand bytes, then nothing).
    static func handler() -> @Sendable (LoopbackServer.Recorded, HTTPResponseWriter) async throws -> Void {
        { request, writer in
            switch request.target {
            case "/malformedJSON": try await writer.reply(200, #"{"a": [1, 2"#, headers: ["Content-Type": "application/json"])
            case "/wrongContentType": try await writer.reply(200, "<p>hi</p>", headers: ["Content-Type": "text/html"])
            case "/bodyOverTheLimit": try await writer.reply(200, String(repeating: "x", count: 64 * 1024))
            case "/redirectLoop": try await writer.reply(302, headers: ["Location": "/redirectLoop"])
            case "/undecodableRetryAfter": try await writer.reply(503, "busy", headers: ["Retry-After": "after lunch"])
            default: try await writer.reply(200, #"{"ok":true}"#, headers: ["Content-Type": "application/json"])
            }
        }
    }

    static func descriptors() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
    }

    static func temporaryDownloads() -> Set<String> {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let folder = (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/WireClient"
        return Set((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
    }

    /// The descriptor count once it holds still (a previous test's sockets may still be closing).
    static func settledDescriptors() async -> Int {
        var count = descriptors()
        for _ in 0..<100 {
            try? await Task.sleep(for: .milliseconds(5))
            let next = descriptors()
            if next == count { return count }
            count = next
        }
        return count
    }

    /// Runs `body` with a manager of its own, invalidates it, and waits for its client to close.
    static func withManager(
        _ configure: (inout SessionConfiguration) -> Void = { _ in },
        _ body: (SessionManager) async throws -> Void
    ) async throws {
        var configuration = SessionConfiguration()
        configure(&configuration)
        let manager = SessionManager(configuration: configuration)
        let invalidated = Recorder<Bool>()
        manager.sessionDidBecomeInvalid = { _ in invalidated.record(true) }
        try await body(manager)
        #expect(await eventually(within: .seconds(10)) { manager.tasks.isEmpty }, "a task outlived its completion")
        manager.invalidateSession(cancelingTasks: true)
        #expect(await eventually(within: .seconds(10)) { !invalidated.all.isEmpty })
    }

    @Test(arguments: Case.allCases)
    func aFailureLeaksNothing(_ failure: Case) async throws {
        // Started before the descriptors are counted: its loop and listener stay open through the test.
        try await FaultPeer.with { faults in
            try await LoopbackServer.with(Self.handler()) { server in
                // One request first, so that descriptors opened once per process (the runtime's timers) are counted.
                try await Self.withManager { manager in _ = try await manager.data(for: ClientRequest(url: server.url("/ok"))) }
                #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 && Self.descriptors() > 0 })
                let before = await Self.settledDescriptors()
                let downloadsBefore = Self.temporaryDownloads()

                try await Self.withManager({ configuration in
                    configuration.maximumBufferedResponseSize = 1024
                    // Grows with a sanitizer's slowdown: every case's exchanges must beat it, only the stall waits for it.
                    configuration.timeoutIntervalForRequest = .milliseconds(300) * Sanitizer.timeScale
                    configuration.maximumRedirects = 3
                }) { manager in
                    let url = failure == .stallMidBody ? faults.url("/stallMidBody") : server.url("/" + failure.rawValue)
                    let code: ClientError.Code?
                    switch failure {
                    case .unwritableDestination:
                        do {
                            _ = try await manager.download(for: ClientRequest(url: server.url("/file"))) { _, _ in
                                "/proc/self/no-such-folder/file"
                            }
                            code = nil
                        } catch { code = (error as? ClientError)?.code }
                    case .undecodableRetryAfter:
                        manager.interceptor = RetryInterceptor(
                            policy: RetryPolicy(
                                maximumRetries: 1, baseDelay: .milliseconds(1),
                                jitter: .none))
                        do { _ = try await manager.data(for: ClientRequest(url: url)); code = nil } catch {
                            code = (error as? ClientError)?.code
                        }
                    default:
                        do { _ = try await manager.data(for: ClientRequest(url: url)); code = nil } catch {
                            code = (error as? ClientError)?.code
                        }
                    }
                    let expected: ClientError.Code =
                        switch failure {
                        case .malformedJSON: .responseSerializationFailed
                        case .wrongContentType: .unacceptableContentType("text/html")
                        case .bodyOverTheLimit: .responseTooLarge
                        case .stallMidBody: .timedOut
                        case .redirectLoop: .tooManyRedirects
                        case .undecodableRetryAfter: .unacceptableStatusCode(503)
                        case .unwritableDestination: .cannotMoveFile
                        }
                    #expect(code == expected)
                    if failure == .undecodableRetryAfter {
                        // The unreadable Retry-After falls back to the backoff: retried once, not refused and not stuck.
                        #expect(server.requests.filter { $0.target == "/undecodableRetryAfter" }.count == 2)
                    }
                }
                let after = await eventually(within: .seconds(10)) { Self.descriptors() <= before }
                #expect(after, "descriptors: \(before) before, \(Self.descriptors()) after")
                #expect(Self.temporaryDownloads().subtracting(downloadsBefore).isEmpty, "a temporary download was left behind")
            }
        }
    }
}
