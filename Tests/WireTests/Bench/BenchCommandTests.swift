import ArgumentParser
import Testing
import WireTool
import Wire
import WireLoad

/// `wire bench` arguments: defaults, the forms durations and headers take, and every refusal.
struct BenchCommandTests {
    @Test func defaultsAreATenSecondClosedLoopOnSixtyFourConnections() throws {
        let command = try BenchCommand.parse(["http://127.0.0.1:8080/"])
        let settings = try command.settings()
        #expect(command.connections == 64)
        #expect(command.loops == 1)
        #expect(command.pipeline == 1)
        #expect(command.rate == nil)
        #expect(settings.stop == .after(.seconds(10)))
        #expect(settings.timeout == .seconds(10))
        #expect(settings.method == .get)
        #expect(settings.url?.port == 8080)
    }

    @Test func everyOptionIsRead() throws {
        let command = try BenchCommand.parse([
            "-c", "8", "-t", "2", "-n", "500", "--pipeline", "4", "-H", "Accept: text/plain", "-H", "X-A:b",
            "-X", "POST", "--timeout", "250ms", "http://example.com/x?y=1",
        ])
        let settings = try command.settings()
        #expect(command.connections == 8)
        #expect(command.loops == 2)
        #expect(command.pipeline == 4)
        #expect(settings.stop == .requests(500))
        #expect(settings.timeout == .milliseconds(250))
        #expect(settings.method == .post)
        #expect(settings.headers.first(name: "accept") == "text/plain")
        #expect(settings.headers.first(name: "x-a") == "b")
    }

    @Test func noURLMeansTheEmbeddedServer() throws {
        let settings = try BenchCommand.parse(["-d", "1s"]).settings()
        #expect(settings.url == nil)
    }

    @Test(arguments: [
        ("10s", Duration.seconds(10)), ("1m", .seconds(60)), ("500ms", .milliseconds(500)), ("1.5s", .milliseconds(1500)),
        ("2", .seconds(2)), ("1h", .seconds(3600)), ("250us", .microseconds(250)),
    ])
    func durations(text: String, expected: Duration) {
        #expect(BenchArguments.duration(text) == expected)
    }

    @Test(arguments: ["", "s", "ten", "-1s", "1d", "nan"])
    func badDurations(text: String) {
        #expect(BenchArguments.duration(text) == nil)
    }

    @Test func headerLines() {
        #expect(BenchArguments.header("Name: value ")! == ("Name", "value"))
        #expect(BenchArguments.header("Name:")! == ("Name", ""))
        #expect(BenchArguments.header("A: b: c")! == ("A", "b: c"))
        #expect(BenchArguments.header("no colon") == nil)
        #expect(BenchArguments.header(": value") == nil)
        #expect(BenchArguments.header("Bad Name: v") == nil)
    }

    @Test(arguments: [
        (["-c", "0"], "-c must be at least 1"),
        (["-t", "0"], "-t must be at least 1"),
        (["-c", "2", "-t", "4"], "must be at least -t"),
        (["--pipeline", "0"], "--pipeline must be at least 1"),
        (["-d", "1s", "-n", "10"], "not both"),
        (["-n", "0"], "-n must be at least 1"),
        (["-d", "0s"], "positive duration"),
        (["-d", "soon"], "positive duration"),
        (["-R", "0"], "-R must be a positive"),
        (["-R", "100", "--pipeline", "2"], "--pipeline cannot be combined with -R"),
        (["--timeout", "0"], "--timeout"),
        (["-n", "5", "--warmup", "1s"], "--warmup needs a timed run"),
        (["--warmup", "later"], "--warmup later"),
        (["-H", "nocolon"], "expected 'Name: value'"),
        (["-X", "G T"], "not a method token"),
        (["-X", "CONNECT"], "CONNECT"),
        (["-x", "127.0.0.1:1", "--socks5", "127.0.0.1:2", "http://example.com/"], "choose one proxy"),
        (["-p", "http://example.com/"], "need a proxy"),
        (["-x", "127.0.0.1:1", "-U", "alice", "http://example.com/"], "user:password"),
        (["-x", "127.0.0.1:1", "http+unix://%2Ftmp%2Fs/"], "Unix socket"),
        (["ftp://example.com/"], "ftp://example.com/"),
        (["--server-loops", "0"], "--server-loops"),
    ])
    func refusals(arguments: [String], message: String) {
        do {
            _ = try BenchCommand.parse(arguments)
            Issue.record("\(arguments) was accepted")
        } catch {
            let text = BenchCommand.message(for: error)
            #expect(text.contains(message), "\(arguments): \(text)")
            #expect(BenchCommand.exitCode(for: error) != .success)
        }
    }
}
