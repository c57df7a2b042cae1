import Foundation
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireTool

/// The request arrivals a scripted server saw, in order.
final class Arrivals: Sendable {
    private let times = Lock<[ContinuousClock.Instant]>([])

    /// Records one arrival now and returns its index (0 for the first).
    func record() -> Int {
        times.withLock {
            $0.append(.now)
            return $0.count - 1
        }
    }

    var all: [ContinuousClock.Instant] { times.withLock { $0 } }
}

/// `--retry`, `--retry-delay`, `--retry-max-time` and `--retry-all-errors` as the options parse them and as
/// `TransferRetry` decides, without a socket.
@Suite struct TransferRetryTests {
    @Test func optionsParseCurlsWay() throws {
        let options = try FetchOptions(
            [
                "--retry", "3", "--retry-delay=0.25", "--retry-max-time", "7",
                "--retry-all-errors", "--retry-connrefused", "http://h/",
            ],
            requiresMethod: false)
        #expect(
            options.retry
                == FetchOptions.RetryOptions(
                    count: 3, delay: .milliseconds(250), maxTime: .seconds(7),
                    allErrors: true, connectionRefused: true))
        // 0 means the default backoff and no limit, as in curl.
        let zero = try FetchOptions(["--retry-delay", "0", "--retry-max-time", "0", "http://h/"], requiresMethod: false)
        #expect(zero.retry.delay == nil && zero.retry.maxTime == nil && zero.retry.count == 0)
        for bad in [["--retry", "-1"], ["--retry", "two"], ["--retry-delay", "soon"], ["--retry-max-time", "-3"]] {
            #expect(throws: FetchUsageError.self) { try FetchOptions(bad + ["http://h/"], requiresMethod: false) }
        }
    }

    @Test func theDefaultBackoffDoublesFromOneSecondUpToTenMinutes() {
        var retry = TransferRetry(.init(count: 12))
        var delays: [Duration] = []
        while let next = retry.retry(url: "http://h/", status: 503, headers: HTTPHeaders()) { delays.append(next.delay) }
        #expect(delays == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600].map { .seconds($0) })
    }

    @Test func warningsHaveCurlsShape() {
        var retry = TransferRetry(.init(count: 2))
        #expect(
            retry.retry(url: "http://h/", status: 503, headers: HTTPHeaders())?.warning
                == "Warning: Problem : HTTP error. Will retry in 1 seconds. 2 retries left.\n")
        #expect(
            retry.retry(url: "http://h/", failure: TransferFailure(status: 28, message: "timed out"))?.warning
                == "Warning: Problem : timeout. Will retry in 2 seconds. 1 retries left.\n")
        #expect(retry.retry(url: "http://h/", status: 503, headers: HTTPHeaders()) == nil)
        var fixed = TransferRetry(.init(count: 1, delay: .milliseconds(250), allErrors: true))
        #expect(
            fixed.retry(url: "http://h/", failure: TransferFailure(status: 52, message: "empty"))?.warning
                == "Warning: Problem (retrying all errors). Will retry in 0.25 seconds. 1 retries left.\n")
    }

    @Test(arguments: [(Int32(28), true), (6, true), (7, false), (52, false), (56, false), (22, false), (35, false)])
    func onlyTimeoutsAndUnknownHostsAreTransientFailures(status: Int32, transient: Bool) {
        var retry = TransferRetry(.init(count: 1))
        #expect((retry.retry(url: "http://h/", failure: TransferFailure(status: status, message: "")) != nil) == transient)
        var refused = TransferRetry(.init(count: 1, connectionRefused: true))
        #expect(
            (refused.retry(url: "http://h/", failure: TransferFailure(status: status, message: "")) != nil)
                == (transient || status == 7))
        var all = TransferRetry(.init(count: 1, allErrors: true))
        #expect(all.retry(url: "http://h/", failure: TransferFailure(status: status, message: "")) != nil)
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func transientStatusesAreRetried(status: Int) {
        var retry = TransferRetry(.init(count: 1))
        #expect(retry.retry(url: "http://h/", status: status, headers: HTTPHeaders()) != nil)
    }

    @Test(arguments: [200, 301, 400, 401, 404, 501, 505])
    func otherStatusesAreAnswers(status: Int) {
        var retry = TransferRetry(.init(count: 1, allErrors: true))
        #expect(retry.retry(url: "http://h/", status: status, headers: HTTPHeaders()) == nil)
    }

    @Test func retryAfterSetsTheWaitHoweverLong() {
        var retry = TransferRetry(.init(count: 2, delay: .milliseconds(100)))
        var headers = HTTPHeaders()
        headers.add(name: "Retry-After", value: "3600")
        #expect(retry.retry(url: "http://h/", status: 429, headers: headers)?.delay == .seconds(3600))
        headers.replaceOrAdd(name: "Retry-After", value: "later, please")
        #expect(retry.retry(url: "http://h/", status: 429, headers: headers)?.delay == .milliseconds(100))
    }

    @Test func noRetryStartsPastTheMaximumTime() {
        let start = ContinuousClock.now
        var retry = TransferRetry(.init(count: 5, delay: .seconds(1), maxTime: .seconds(3)), now: start)
        #expect(retry.retry(url: "http://h/", status: 503, headers: HTTPHeaders(), now: start + .seconds(1)) != nil)
        // As curl 7.88 counts: the wait is not added, so a retry still starts though its wait ends past the limit.
        #expect(
            retry.retry(url: "http://h/", status: 503, headers: HTTPHeaders(), now: start + .milliseconds(2500))
                != nil)
        #expect(retry.retry(url: "http://h/", status: 503, headers: HTTPHeaders(), now: start + .seconds(3)) == nil)
        #expect(retry.stopWarning == nil)
    }

    @Test func aRetryAfterPastTheMaximumTimeEndsTheRetriesWithCurlsWarning() {
        let start = ContinuousClock.now
        var retry = TransferRetry(.init(count: 5, maxTime: .seconds(3)), now: start)
        var headers = HTTPHeaders()
        headers.add(name: "Retry-After", value: "2")
        // curl adds the wait to the whole seconds elapsed: 1.9 s counts as 1, and 1 + 2 is not over 3.
        #expect(retry.retry(url: "http://h/", status: 503, headers: headers, now: start + .milliseconds(1900)) != nil)
        #expect(retry.stopWarning == nil)
        #expect(retry.retry(url: "http://h/", status: 503, headers: headers, now: start + .seconds(2)) == nil)
        #expect(
            retry.stopWarning
                == "Warning: The Retry-After: time would make this command line exceed the maximum \n"
                + "Warning: allowed time for retries.\n")
    }

    @Test func curlsWarningsWrapAt79Columns() {
        #expect(CurlWarning.text("short") == "Warning: short\n")
        #expect(
            CurlWarning.text(
                "A specified range MUST include at least one dash (-). Appending one for you!")
                == "Warning: A specified range MUST include at least one dash (-). Appending one \nWarning: for you!\n")
        // No space to break at: cut at the width.
        #expect(
            CurlWarning.text(String(repeating: "x", count: 75))
                == "Warning: \(String(repeating: "x", count: 70))\nWarning: xxxxx\n")
    }
}

extension IOSuite {
    /// `wire get --retry` against a scripted loopback server, run as a process.
    @Suite struct GetRetryToolTests {
        static func withServer(
            _ reply: @escaping @Sendable (_ index: Int) -> ScriptedServer.Reply,
            _ body: (_ url: String, _ arrivals: Arrivals) async throws -> Void
        ) async throws {
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "retry-peer")
            let arrivals = Arrivals()
            let server = try await ScriptedServer.start(on: group.next()) { _, _, _ in reply(arrivals.record()) }
            do {
                try await body("http://127.0.0.1:\(server.address.port!)/item", arrivals)
            } catch {
                try await server.close()
                await group.shutdownGracefully()
                throw error
            }
            try await server.close()
            await group.shutdownGracefully()
        }

        static func unavailable(_ extra: String = "") -> ScriptedServer.Reply {
            .respond("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\(extra)\r\nbusy")
        }

        static func warnings(_ run: WireToolRunner.Run) -> [Substring] {
            run.errors.split(separator: "\n").filter { $0.hasPrefix("Warning: Problem") }
        }

        @Test func twoUnavailableAnswersThenTheBody() async throws {
            try await Self.withServer({ $0 < 2 ? Self.unavailable() : .respond(ScriptedServer.ok("done")) }) { url, arrivals in
                let run = try await WireToolRunner.run(["get", "--retry", "2", "--retry-delay", "0.05", url])
                #expect(run.status == 0, "\(run.errors)")
                // As curl writes them: each failed attempt's body on standard output, then the good one.
                #expect(run.text == "busybusydone")
                #expect(
                    Self.warnings(run) == [
                        "Warning: Problem : HTTP error. Will retry in 0.05 seconds. 2 retries left.",
                        "Warning: Problem : HTTP error. Will retry in 0.05 seconds. 1 retries left.",
                    ])
                #expect(arrivals.all.count == 3)
            }
        }

        @Test func retriesRunOutOnTheLastAnswer() async throws {
            try await Self.withServer({ _ in Self.unavailable() }) { url, arrivals in
                let run = try await WireToolRunner.run(["get", "--retry", "1", "--retry-delay", "0.05", url])
                // As curl: every answer is written and, without -f, the last is a success.
                #expect(run.status == 0)
                #expect(run.text == "busybusy")
                #expect(Self.warnings(run).count == 1)
                #expect(arrivals.all.count == 2)
            }
        }

        @Test func retryAfterSecondsIsHonoured() async throws {
            try await Self.withServer({ $0 == 0 ? Self.unavailable("Retry-After: 1\r\n") : .respond(ScriptedServer.ok("done")) })
            { url, arrivals in
                let run = try await WireToolRunner.run(["get", "--retry", "1", "--retry-delay", "0.05", url], seconds: 15)
                #expect(run.status == 0, "\(run.errors)")
                #expect(run.text == "busydone")
                #expect(Self.warnings(run) == ["Warning: Problem : HTTP error. Will retry in 1 seconds. 1 retries left."])
                let times = arrivals.all
                #expect(times.count == 2)
                if times.count == 2 { #expect(times[1] - times[0] >= .seconds(1)) }
            }
        }

        @Test func aNotFoundIsAnAnswerAndNotRetried() async throws {
            let notFound = ScriptedServer.Reply.respond("HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\ngone")
            try await Self.withServer({ _ in notFound }) { url, arrivals in
                let run = try await WireToolRunner.run(["get", "--retry", "3", "--retry-delay", "0.05", url])
                #expect(run.status == 0)
                #expect(run.text == "gone")
                #expect(Self.warnings(run).isEmpty)
                #expect(arrivals.all.count == 1)
                // Nor with -f: 22 is not transient.
                let failed = try await WireToolRunner.run(["get", "-f", "--retry", "3", "--retry-delay", "0.05", url])
                #expect(failed.status == 22)
                #expect(arrivals.all.count == 2)
            }
        }

        @Test func retryAllErrorsRetriesWhatIsNotTransient() async throws {
            // An empty reply (52), then a 404 (22 with -f), then the body.
            let notFound = ScriptedServer.Reply.respond("HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\ngone")
            let script: @Sendable (Int) -> ScriptedServer.Reply = {
                switch $0 {
                case 0: .close
                case 1: notFound
                default: .respond(ScriptedServer.ok("done"))
                }
            }
            try await Self.withServer(script) { url, arrivals in
                let run = try await WireToolRunner.run([
                    "get", "-f", "--retry", "2", "--retry-delay", "0.05",
                    "--retry-all-errors", url,
                ])
                #expect(run.status == 0, "\(run.errors)")
                #expect(run.text == "done")
                #expect(
                    Self.warnings(run) == [
                        "Warning: Problem (retrying all errors). Will retry in 0.05 seconds. 2 retries left.",
                        "Warning: Problem (retrying all errors). Will retry in 0.05 seconds. 1 retries left.",
                    ])
                #expect(arrivals.all.count == 3)
            }
            // Without the switch, the empty reply is final.
            try await Self.withServer(script) { url, arrivals in
                let run = try await WireToolRunner.run(["get", "-f", "--retry", "2", "--retry-delay", "0.05", url])
                #expect(run.status == 52)
                #expect(arrivals.all.count == 1)
            }
        }

        @Test func aTimeoutIsTransient() async throws {
            try await Self.withServer({ $0 == 0 ? .silence : .respond(ScriptedServer.ok("done")) }) { url, arrivals in
                let run = try await WireToolRunner.run([
                    "get", "--max-time", "0.3", "--retry", "1",
                    "--retry-delay", "0.05", url,
                ])
                #expect(run.status == 0, "\(run.errors)")
                #expect(run.text == "done")
                #expect(Self.warnings(run) == ["Warning: Problem : timeout. Will retry in 0.05 seconds. 1 retries left."])
                #expect(arrivals.all.count == 2)
            }
        }

        /// curl 7.88 starts a retry while the time elapsed is under --retry-max-time, whatever the wait: with a 1 s
        /// wait and a 1 s limit, the first retry is made (at about 0 s) and the second not (at 1 s), though 4 are left.
        @Test func retryMaxTimeStopsRetrying() async throws {
            try await Self.withServer({ _ in Self.unavailable() }) { url, arrivals in
                let words = ["--no-progress-meter", "--retry", "5", "--retry-delay", "1", "--retry-max-time", "1", url]
                let wire = try await WireToolRunner.run(["get"] + words)
                let wireRequests = arrivals.all.count
                let curl = try await WireToolRunner.run(program: CurlPeer.curl, words)
                let curlRequests = arrivals.all.count - wireRequests
                #expect(wire.status == 0 && curl.status == 0)
                #expect(wireRequests == 2 && curlRequests == 2)
                #expect(wire.text == "busybusy" && curl.text == wire.text)
                #expect(wire.errors == "Warning: Problem : HTTP error. Will retry in 1 seconds. 5 retries left.\n")
                #expect(curl.errors == wire.errors)
            }
        }

        /// A Retry-After that would end past --retry-max-time ends the retries at once, with curl's warning (curl
        /// 7.88 leaves its last line without a line end; Wire ends it).
        @Test func retryAfterPastTheMaximumTimeEndsTheRetries() async throws {
            try await Self.withServer({ _ in Self.unavailable("Retry-After: 2\r\n") }) { url, arrivals in
                let words = ["--no-progress-meter", "--retry", "5", "--retry-max-time", "1", url]
                let wire = try await WireToolRunner.run(["get"] + words)
                let wireRequests = arrivals.all.count
                let curl = try await WireToolRunner.run(program: CurlPeer.curl, words)
                let curlRequests = arrivals.all.count - wireRequests
                #expect(wire.status == 0 && curl.status == 0)
                #expect(wireRequests == 1 && curlRequests == 1)
                #expect(wire.text == "busy" && curl.text == wire.text)
                let warning =
                    "Warning: The Retry-After: time would make this command line exceed the maximum \n"
                    + "Warning: allowed time for retries."
                #expect(curl.errors == warning)
                #expect(wire.errors == warning + "\n")
            }
        }

        @Test func silentSuppressesTheWarnings() async throws {
            try await Self.withServer({ $0 < 1 ? Self.unavailable() : .respond(ScriptedServer.ok("done")) }) { url, _ in
                let run = try await WireToolRunner.run(["get", "-s", "--retry", "1", "--retry-delay", "0.05", url])
                #expect(run.status == 0)
                #expect(run.text == "busydone")
                #expect(run.errors.isEmpty)
            }
        }
    }
}
