import ArgumentParser
import Glibc
import Wire
import WireLoad

/// `wire bench`: a load run (`wire bench [run]`, the default) or the merge of a segmented run's logs
/// (`wire bench merge`). A group rather than one command with a subcommand: ArgumentParser parses a
/// parent's positional URL before it looks for a subcommand, so `merge` would be taken for a URL.
struct BenchGroupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Load an HTTP/1.1 server and report requests/s, latency percentiles, errors and CPU per request.",
        discussion: """
            `wire bench [URL] [options]` runs the load (`wire bench run --help` lists its options); \
            `wire bench merge LOG…` reports the interval logs of a run's parts (--segment) as one run.
            """,
        subcommands: [BenchCommand.self, BenchMergeCommand.self],
        defaultSubcommand: BenchCommand.self
    )
}

/// `wire bench [run]`: an HTTP/1.1 load generator on Wire's own event loops and connection engine, in
/// the spirit of wrk (closed loop) and wrk2 (constant rate, latencies corrected for coordinated omission).
package struct BenchCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Load an HTTP/1.1 server and report requests/s, latency percentiles, errors and CPU per request.",
        discussion: """
            Without a URL, starts an embedded `wire serve --hello` on 127.0.0.1 (on loops of its own) and measures the \
            whole stack. Closed loop by default: each connection sends its next request (or --pipeline batch) as soon \
            as the last answer arrives. With -R, requests are sent on a fixed schedule spread over the connections, \
            and each latency runs from the time its request was due, so a stalled server shows in the percentiles \
            instead of silently slowing the load (coordinated omission).

            Across machines: run N processes with --segment 1/N … N/N and a common --start-at; each opens its \
            share of -c and sends its share of -R (and -n), and their schedules interleave into the one run's. \
            Write --hlog or --json-intervals on each, then `wire bench merge` reports them as one run.
            """
    )

    package init() {}

    @Argument(
        help:
            "The URL to load (http://HOST[:PORT]/PATH, https://… or http+unix://SOCKET/PATH); none: an embedded server.")
    var url: String?

    @Option(name: [.customShort("c"), .customLong("connections")], help: "Connections in total, kept alive.")
    package var connections = 64

    @Option(name: [.customShort("d"), .customLong("duration")], help: "How long to measure: 10s, 1m, 500ms (default 10s).")
    var duration: String?

    @Option(name: [.customShort("n"), .customLong("requests")], help: "Stop after exactly this many requests (instead of -d).")
    var requests: Int?

    @Option(name: [.customShort("t"), .customLong("loops")], help: "Event loops (threads) sending the load.")
    package var loops = 1

    @Option(help: "Requests in flight per connection, written together in one write.")
    package var pipeline = 1

    @Option(name: [.customShort("H"), .customLong("header")], help: "A request header, 'Name: value' (repeatable).")
    var headers: [String] = []

    @Option(name: [.customShort("X"), .customLong("method")], help: "The request method.")
    var method = "GET"

    @Option(help: "Send this file's bytes as the request body (with Content-Length).")
    var body: String?

    @Option(name: [.customShort("R"), .customLong("rate")], help: "Constant rate: requests per second in total.")
    package var rate: Double?

    @Option(help: "Seconds (or 2s, 500ms) before an unanswered request counts as a timeout.")
    var timeout = "10s"

    @Option(help: "Load sent before measuring starts, not counted (with -d only).")
    var warmup: String?

    @Option(help: "Write the HdrHistogram percentile distribution (wrk2's format, milliseconds) to this file.")
    var hgrm: String?

    @Option(help: "Draw latency by percentile into this SVG file.")
    var plot: String?

    @Flag(help: "Print a JSON summary on standard output instead of the report.")
    var json = false

    @Option(help: "Event loops of the embedded server (when no URL is given).")
    var serverLoops = 1

    @Option(
        help: ArgumentHelp(
            "Run part I of N of the load (1/4 … 4/4): its share of -c, -R and -n, as k6's execution segments.",
            valueName: "I/N"))
    var segment: String?

    @Option(
        help: ArgumentHelp(
            "Start at this wall-clock time, after the connections are open (RFC 3339, or seconds since the epoch).",
            valueName: "TIME"))
    var startAt: String?

    @Option(help: ArgumentHelp("Write an HdrHistogram interval log (latencies per interval) to this file.", valueName: "FILE"))
    var hlog: String?

    @Option(
        help: ArgumentHelp(
            "Write one JSON line per interval (requests, errors by kind, percentiles, histogram) to this file.",
            valueName: "FILE"))
    var jsonIntervals: String?

    @Option(help: "The length of an interval of --hlog and --json-intervals.")
    var interval = "1s"

    @Option(
        help: ArgumentHelp(
            "Send the requests of this file in turn, by weight, instead of one request (format: README).",
            valueName: "FILE"))
    var requestsFile: String?

    @Option(
        name: [.customShort("x"), .customLong("proxy")],
        help: ArgumentHelp(
            "Send the load through this proxy, as curl's -x: [http|https|socks4|socks4a|socks5|socks5h://][user:pw@]HOST[:PORT].",
            valueName: "URL"))
    var proxy: String?

    @Flag(
        name: [.customShort("p"), .customLong("proxytunnel")],
        help: "Tunnel http:// through the HTTP proxy with CONNECT instead of forwarding (https:// always tunnels).")
    var proxyTunnel = false

    @Option(
        name: [.customShort("U"), .customLong("proxy-user")],
        help: ArgumentHelp("The proxy's credentials, unless its URL has its own.", valueName: "USER:PASSWORD"))
    var proxyUser: String?

    @Option(help: ArgumentHelp("A SOCKS 4 proxy, as -x socks4://HOST[:PORT].", valueName: "HOST[:PORT]"))
    var socks4: String?

    @Option(help: ArgumentHelp("A SOCKS 4a proxy (resolves the host), as -x socks4a://.", valueName: "HOST[:PORT]"))
    var socks4a: String?

    @Option(help: ArgumentHelp("A SOCKS 5 proxy, as -x socks5://.", valueName: "HOST[:PORT]"))
    var socks5: String?

    @Option(help: ArgumentHelp("A SOCKS 5 proxy that resolves the host, as -x socks5h://.", valueName: "HOST[:PORT]"))
    var socks5Hostname: String?

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: "https: do not verify the server's certificate.")
    var insecure = false

    @Option(help: ArgumentHelp("https: verify the server's certificate with these roots (PEM).", valueName: "FILE"))
    var cacert: String?

    @Flag(help: "Do not verify an https proxy's certificate.")
    var proxyInsecure = false

    @Option(help: ArgumentHelp("Verify an https proxy's certificate with these roots (PEM).", valueName: "FILE"))
    var proxyCacert: String?

    /// The arguments, checked and converted.
    package struct Settings {
        package var url: HTTPURL?
        package var stop: LoadPlan.Stop
        package var timeout: Duration
        var warmup: Duration
        package var method: HTTPMethod
        package var headers: HTTPHeaders
        var segment = LoadSegment.whole
        /// The common start, in seconds since the Unix epoch.
        var startAt: Double?
        var interval: Duration = .seconds(1)
        /// The proxy of `-x` or `--socks*` (with `-U`), nil for none.
        var proxy: Proxy?
    }

    package func validate() throws {
        _ = try settings()
    }

    /// Checks every argument and converts them; the messages name the argument at fault.
    package func settings() throws(ValidationError) -> Settings {
        guard connections >= 1 else { throw ValidationError("-c must be at least 1") }
        guard loops >= 1 else { throw ValidationError("-t must be at least 1") }
        guard connections >= loops else {
            throw ValidationError("-c (\(connections)) must be at least -t (\(loops)): each loop needs a connection")
        }
        guard pipeline >= 1 else { throw ValidationError("--pipeline must be at least 1") }
        guard serverLoops >= 1 else { throw ValidationError("--server-loops must be at least 1") }
        if duration != nil && requests != nil { throw ValidationError("choose -d DURATION or -n REQUESTS, not both") }
        let stop: LoadPlan.Stop
        if let requests {
            guard requests >= 1 else { throw ValidationError("-n must be at least 1") }
            stop = .requests(requests)
        } else {
            let text = duration ?? "10s"
            guard let value = BenchArguments.duration(text), value > .zero else {
                throw ValidationError("-d \(text): expected a positive duration such as 10s, 1m or 500ms")
            }
            stop = .after(value)
        }
        if let rate {
            guard rate > 0, rate.isFinite else { throw ValidationError("-R must be a positive number of requests per second") }
            guard pipeline == 1 else {
                throw ValidationError("--pipeline cannot be combined with -R: a constant rate sends one request at a time")
            }
        }
        guard let timeoutValue = BenchArguments.duration(timeout), timeoutValue > .zero else {
            throw ValidationError("--timeout \(timeout): expected a positive duration such as 2s or 500ms")
        }
        var warmupValue = Duration.zero
        if let warmup {
            guard let value = BenchArguments.duration(warmup) else {
                throw ValidationError("--warmup \(warmup): expected a duration such as 2s")
            }
            guard requests == nil else { throw ValidationError("--warmup needs a timed run (-d), not -n") }
            warmupValue = value
        }
        let httpMethod = HTTPMethod(method)
        guard !method.isEmpty, method.allSatisfy({ $0.isLetter || $0 == "-" || $0 == "_" }) else {
            throw ValidationError("-X \(method): not a method token")
        }
        guard httpMethod != .connect else { throw ValidationError("-X CONNECT cannot be benchmarked: it opens a tunnel") }
        var fields = HTTPHeaders()
        for line in headers {
            guard let (name, value) = BenchArguments.header(line) else {
                throw ValidationError("-H \(line): expected 'Name: value'")
            }
            fields.add(name: name, value: value)
        }
        var parsedURL: HTTPURL?
        if let url {
            do {
                parsedURL = try HTTPURL(url)
            } catch {
                throw ValidationError("\(url): \(error)")
            }
        }
        var settings = Settings(
            url: parsedURL, stop: stop, timeout: timeoutValue, warmup: warmupValue, method: httpMethod, headers: fields)
        try distributedSettings(into: &settings)
        try proxySettings(into: &settings)
        return settings
    }

    /// The options of a run in parts and of its logs.
    private func distributedSettings(into settings: inout Settings) throws(ValidationError) {
        if let segment {
            guard let value = LoadSegment(parsing: segment) else {
                throw ValidationError("--segment \(segment): expected I/N, part I of N counted from 1 (1/4 … 4/4)")
            }
            guard url != nil || value.count == 1 else {
                throw ValidationError("--segment needs a URL: the parts of a run load one server")
            }
            let share = value.share(of: connections)
            guard share >= loops else {
                throw ValidationError(
                    "--segment \(segment): this part opens \(share) of the \(connections) connections (-c), fewer than -t \(loops)"
                )
            }
            if let requests, value.share(of: requests) == 0 {
                throw ValidationError("--segment \(segment): -n \(requests) leaves this part no request")
            }
            settings.segment = value
        }
        if let startAt {
            guard let instant = BenchArguments.instant(startAt) else {
                throw ValidationError(
                    "--start-at \(startAt): expected RFC 3339 (2026-11-30T12:00:00Z) or seconds since the epoch")
            }
            settings.startAt = instant
        }
        guard let length = BenchArguments.duration(interval), length >= .milliseconds(1) else {
            throw ValidationError("--interval \(interval): expected a duration of at least 1ms, such as 1s")
        }
        settings.interval = length
        if requestsFile != nil {
            guard method == "GET", body == nil else {
                throw ValidationError("--requests-file sets each request's method and body: leave out -X and --body")
            }
        }
    }

    package func run() async throws {
        let settings = try settings()
        var bodyBytes: [UInt8]?
        if let body {
            do {
                bodyBytes = try LocalFiles.contents(atPath: body)
            } catch {
                throw ValidationError("--body \(body): cannot read the file (\(error))")
            }
        }
        var embedded: (server: HTTPServer, group: EventLoopGroup)?
        let target: HTTPURL
        if let url = settings.url {
            target = url
        } else {
            let group = try EventLoopGroup(loopCount: serverLoops, namePrefix: "wire-bench-serve")
            let server = HTTPServer(
                configuration: HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0)),
                group: group, handler: HTTPFixedResponseHandler.hello)
            let address = try await server.start()
            embedded = (server, group)
            target = try HTTPURL("http://127.0.0.1:\(address.port ?? 0)/")
            Self.standardError(
                "wire bench: no URL given: measuring the whole stack against an embedded `wire serve --hello` "
                    + "on \(target) (\(serverLoops) server loop\(serverLoops == 1 ? "" : "s"), \(loops) bench loop\(loops == 1 ? "" : "s"))\n"
            )
        }
        defer {
            if let embedded { embedded.group.shutdown() }
        }

        // Through a proxy or over TLS, connections are opened by Wire's client, one on each bench loop.
        let connector: BenchConnector?
        do {
            connector = try makeConnector(settings, target: target)
        } catch let failure as TransferFailure {
            Self.standardError(failure.line + "\n")
            throw ExitCode(failure.status)
        } catch {
            Self.standardError("wire bench: \(error)\n")
            throw ExitCode(1)
        }
        var plan: LoadPlan
        do {
            plan = try makePlan(settings, target: target, body: bodyBytes, connector: connector)
        } catch {
            Self.standardError("wire bench: \(error)\n")
            if let connector { await connector.shutdown() }
            throw ExitCode(1)
        }
        // The monotonic clock against the wall clock, read once: intervals and the start time convert with it.
        let clock = BenchClock()
        if let startAt = settings.startAt {
            guard let instant = clock.monotonic(atWallSeconds: startAt) else {
                Self.standardError("wire bench: --start-at \(self.startAt ?? "") has passed\n")
                throw ExitCode(1)
            }
            plan.startAt = instant
        }
        let logs: BenchIntervalLogs?
        do {
            logs = try BenchIntervalLogs(
                hlogPath: hlog, jsonPath: jsonIntervals, clock: clock,
                run: runDescription(settings, target: target, isEmbeddedServer: embedded != nil))
        } catch {
            Self.standardError("wire bench: \(error)\n")
            throw ExitCode(1)
        }
        let progress = isatty(STDERR_FILENO) == 1 ? Self.progressLine : nil
        let result: LoadResult<LatencyHistogram.Summary>
        do {
            result = try LoadGenerator.run(
                plan, on: connector?.group, recorder: LatencyHistogram.self, progress: progress,
                intervals: logs.map { logs in LoadIntervalReporting(every: settings.interval) { logs.record($0) } })
        } catch {
            if let connector { await connector.shutdown() }
            // Through a proxy, a refusal is curl's: `wire: (56) CONNECT tunnel failed, response 403`, exit 56.
            if let cause = error.cause as? HTTPClientError {
                let failure = TransferFailure(cause)
                Self.standardError(failure.line + "\n")
                throw ExitCode(failure.status)
            }
            Self.standardError("wire bench: \(error)\n")
            throw ExitCode(1)
        }
        if let connector { await connector.shutdown() }
        if progress != nil { Self.standardError("\r\u{1B}[K") }
        if let embedded { await embedded.server.shutdown(gracePeriod: .seconds(1)) }

        let segmentRate = rate.map { $0 / Double(settings.segment.count) }
        let summary = BenchSummary(
            url: target.description, isEmbeddedServer: embedded != nil, connections: plan.segmentConnections, loops: loops,
            pipeline: pipeline, rate: segmentRate, duration: result.duration, statistics: result.statistics,
            latency: LatencyHistogram.merged(result.latencies), processCPU: result.processCPU, loopCPU: result.loopCPU,
            segment: settings.segment.count > 1 ? settings.segment : nil, mixSize: plan.mix.count)
        if let logs {
            do {
                try logs.finish(summary: summary)
            } catch {
                Self.standardError("wire bench: \(error)\n")
                throw ExitCode(1)
            }
        }
        StandardStreams.output(json ? summary.json : summary.text)
        if let hgrm { try write(summary.percentileDistribution, to: hgrm) }
        if let plot {
            let mode = rate.map { "\(BenchSummary.count($0)) requests/s" } ?? "closed loop"
            let figure = PercentilePlot(
                title: "wire bench \(target)",
                subtitle: "\(connections) connections, \(loops) loop\(loops == 1 ? "" : "s"), \(mode), pipeline \(pipeline): "
                    + "\(BenchSummary.count(summary.requestsPerSecond)) requests/s over \(DecimalText.fixed(summary.seconds, decimals: 1)) s",
                histogram: summary.latency)
            try write(figure.svg, to: plot)
        }
        if summary.requests == 0 {
            Self.standardError("wire bench: no request was answered\n")
            throw ExitCode(1)
        }
    }

    /// Resolves the target and serializes the request once.
    private func makePlan(_ settings: Settings, target: HTTPURL, body: [UInt8]?, connector: BenchConnector?) throws
        -> LoadPlan
    {
        let addresses: [SocketAddress]
        if connector != nil {
            // Wire's client resolves, as a request would: the proxy's name, and the target's only where the route
            // needs it (not through a forwarding proxy, socks4a or socks5h).
            addresses = []
        } else if let path = target.unixSocketPath {
            addresses = [try SocketAddress(unixPath: path)]
        } else {
            let port = target.port ?? 80
            let host = target.host.hasPrefix("[") ? String(target.host.dropFirst().dropLast()) : target.host
            addresses = try SystemResolver.resolveBlocking(host: host, port: port)
        }
        let forwarding = connector?.forwardingProxy
        let request = try LoadPlan.serializeRequest(
            method: settings.method, url: target, headers: settings.headers, body: body, forwardingTo: forwarding)
        var plan = LoadPlan(
            addresses: addresses, host: target.host, port: target.port ?? (target.isTLS ? 443 : 80), request: request)
        plan.openStream = connector?.openStream
        plan.isHeadRequest = settings.method == .head
        if let requestsFile {
            plan.mix = try requestMix(path: requestsFile, target: target, headers: settings.headers, forwardingTo: forwarding)
        }
        plan.segment = settings.segment
        plan.connections = connections
        plan.loops = loops
        plan.pipeline = pipeline
        plan.stop = settings.stop
        plan.rate = rate
        plan.timeout = settings.timeout
        plan.warmup = settings.warmup
        return plan
    }

    /// The `--requests-file` mix, serialized; the `-H` fields go on every request, before its own.
    private func requestMix(path: String, target: HTTPURL, headers: HTTPHeaders, forwardingTo proxy: Proxy?) throws
        -> [LoadPlan.MixEntry]
    {
        let text: String
        do {
            text = String(decoding: try LocalFiles.contents(atPath: path), as: UTF8.self)
        } catch {
            throw ValidationError("--requests-file \(path): cannot read the file (\(error))")
        }
        let folder = path.contains("/") ? String(path[...path.lastIndex(of: "/")!]) : ""
        let file: RequestMixFile
        do {
            file = try RequestMixFile(text: text, origin: target) { bodyPath in
                try LocalFiles.contents(atPath: bodyPath.hasPrefix("/") ? bodyPath : folder + bodyPath)
            }
        } catch {
            throw ValidationError("--requests-file \(path): \(error)")
        }
        return try file.entries.map { entry in
            var fields = headers
            fields.add(contentsOf: entry.headers)
            do {
                let bytes = try LoadPlan.serializeRequest(
                    method: entry.method, url: entry.url, headers: fields, body: entry.body, forwardingTo: proxy)
                return LoadPlan.MixEntry(request: bytes, isHead: entry.method == .head, weight: entry.weight)
            } catch {
                throw ValidationError("--requests-file \(path): line \(entry.line): \(error)")
            }
        }
    }

    /// What the interval logs say about the run they belong to.
    private func runDescription(_ settings: Settings, target: HTTPURL, isEmbeddedServer: Bool) -> BenchIntervalLogs.Run {
        BenchIntervalLogs.Run(
            url: target.description, segment: settings.segment, connections: connections, loops: loops, pipeline: pipeline,
            rate: rate, isEmbeddedServer: isEmbeddedServer)
    }

    private func write(_ text: String, to path: String) throws {
        do {
            try LocalFiles.write(Array(text.utf8), toPath: path)
        } catch {
            Self.standardError("wire bench: cannot write \(path): \(error)\n")
            throw ExitCode(1)
        }
    }

    /// `  3 s  123,456 responses  41,152/s`, redrawn in place.
    private static func progressLine(_ progress: LoadProgress) {
        let seconds = progress.elapsed.secondsValue
        let rate = seconds > 0 ? Double(progress.responses) / seconds : 0
        standardError(
            "\r\u{1B}[K  \(Int(seconds.rounded())) s  \(BenchSummary.count(Double(progress.responses))) responses  "
                + "\(BenchSummary.count(rate)) requests/s")
    }

    private static func standardError(_ text: String) {
        StandardStreams.error(text)
    }
}
