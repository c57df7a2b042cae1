import Glibc
import Wire
import WireClient
import WireTLS

/// Runs the transfers of one `wire get` or `wire request` call: each URL (each URL of a glob) in turn, over the
/// keep-alive pool of one `HTTPClient` (so a second URL on the same origin reuses the first one's connection), paced
/// by `--rate`; with `-Z`, several at once over that same pool (Fetcher+Parallel).
///
/// A failed transfer prints one line on standard error (unless `-s` without `-S`) and the next URL is still fetched
/// (unless `--fail-early`); the exit status is the last transfer's, as in curl 7.88.
struct Fetcher {
    let options: FetchOptions
    /// Standard error, or `--stderr`'s file.
    let standardError: OutputSink
    /// `-D`'s sink, opened once for every transfer of the run.
    private let headerSink: OutputSink?
    /// `-b` and `-c`, when given: the cookie engine shared by every URL of the run.
    let cookies: CookieEngine?
    /// `--cache-dir`'s cache.
    private let cache: FetchCache?
    /// With `-w` or `--trace`: what each transfer wrote, read and measured (with `-Z`, one per transfer).
    var observation: TransferObservation?
    /// Where a transfer's standard output goes: the process's, or with `-Z` a sink holding it until the transfer ends.
    var standardOutput = OutputSink.standardOutput
    /// With `-Z` and a meter: the meter, and this transfer's number in it.
    var meter: (meter: ParallelMeter, transfer: Int)?
    /// `--record FILE`: every byte and the metrics of each request, saved when the run ends.
    let recorder: ClientRecorder?
    /// `--trace`'s file could not be created.
    private let traceFailure: TransferFailure?

    /// A fetcher for validated options; `-b` cookie files are read now.
    init(options: FetchOptions) {
        self.options = options
        // curl goes on with standard error when the --stderr file cannot be opened.
        standardError = options.errorFile.flatMap { try? OutputSink.file($0) } ?? .standardError
        headerSink = options.output.headerFile.flatMap { try? OutputSink.file($0) }
        cookies = CookieEngine(options: options)
        cache = options.cacheDirectory.map {
            FetchCache(directory: $0, unixSocket: RequestBuilder.socketPath(options))
        }
        var trace: TraceWriter?
        var traceFailure: TransferFailure?
        if let target = options.trace {
            do { trace = try TraceWriter(path: target.path, ascii: target.ascii, showsTime: options.traceTime) } catch {
                traceFailure = error
            }
        }
        self.traceFailure = traceFailure
        recorder = options.record.map { ClientRecorder(path: $0) }
        observation =
            options.writeOut != nil || trace != nil ? TransferObservation(trace: trace, tracesTCPInfo: options.traceTCPInfo) : nil
    }

    /// Fetches every URL and returns the exit status.
    func run() async -> Int32 {
        let builder: RequestBuilder
        do { builder = try RequestBuilder(options: options) } catch {
            report(error)
            return error.status
        }
        if let warning = builder.warning { warn(warning) }
        if options.method != nil && options.followRedirects {
            // curl's documented rule, which surprises: the method is not changed by a 301, 302 or 303.
            warn(
                "Warning: -X \(options.method!.rawValue) is sent again at every redirect -L follows, as curl does; "
                    + "leave -X out to let a 301, 302 or 303 turn a POST into a GET.\n")
        }
        if let traceFailure {
            report(traceFailure)
            return traceFailure.status
        }
        if let file = options.output.headerFile, headerSink == nil {
            let failure = TransferFailure(status: ExitStatus.writeError, message: "cannot create \(file) for -D")
            report(failure)
            return failure.status
        }
        if let path = options.etagSave, path != "-", !Self.canCreate(path) {
            // curl 7.88 opens the file before the transfer and, when it cannot, skips it (the run then did nothing).
            warn(CurlWarning.text("Failed creating file for saving etags: \"\(path)\". Skip this transfer"))
            let failure = TransferFailure(status: ExitStatus.readError, message: "no transfer performed")
            report(failure)
            return failure.status
        }
        var configuration = HTTPClientConfiguration()
        if let connectTimeout = options.connectTimeout { configuration.connectTimeout = connectTimeout }
        // The tool follows redirects itself (Fetcher+Redirects), with curl's rules; it writes User-Agent itself, in
        // curl's place, and -H 'Expect:' turns Wire's own Expect off.
        configuration.redirects = .disallow
        // Read from the kernel only when the trace shows it.
        configuration.samplesTCPInfo = options.traceTCPInfo && options.trace != nil
        configuration.userAgent = nil
        // curl 7.88 asks `Expect: 100-continue` before a POST body above 1 MiB (-T asks for any body, RequestBuilder).
        configuration.expectContinueThreshold = options.removedHeaders.contains("expect") ? nil : (1 << 20) + 1
        configuration.expectContinueTimeout = options.transport.expect100Timeout
        configuration.requestVersion = options.routing.http10 ? .http1_0 : .http1_1
        configuration.parserConfiguration.passesChunkedFraming = options.raw
        // -Z: each transfer in flight may need a connection of its own to one origin (HTTP/1.1 has no multiplexing);
        // the pool opens no more than that and hands a finished transfer's connection to the next.
        if options.parallel { configuration.maxConnectionsPerHost = options.parallelMax }
        do throws(TransferFailure) {
            if let routing = try FetchRouting(options.routing) { configuration.resolver = routing }
            configuration.socketOptions = try await Self.socketOptions(options)
        } catch {
            report(error)
            return error.status
        }
        Self.applyProxyOptions(options.proxy, to: &configuration)
        do { configuration.tls = try Self.tlsConfiguration(options.tls) } catch {
            report(error)
            return error.status
        }
        // One loop: transfers run one at a time (with -Z, interleaved on it). The transfers themselves run on it too, so each body chunk goes
        // from the socket to the output on one thread, with no hop to another thread and back per chunk.
        let group: EventLoopGroup
        let client: HTTPClient
        do {
            group = try EventLoopGroup(loopCount: 1, namePrefix: "wire-get")
            client = try HTTPClient(configuration: configuration, group: group)
        } catch {
            let failure = TransferFailure(status: ExitStatus.generic, message: "cannot start the client: \(error)")
            report(failure)
            return failure.status
        }
        var status = await withTaskExecutorPreference(group.loops[0]) {
            await transferAll(with: builder, client: client)
        }
        await client.shutdown()
        await group.shutdownGracefully()
        if let warning = cookies?.saveJar() { try? standardError.write(warning) }
        if let recorder {
            // Written whatever the transfers' outcome: a failed exchange is what a recording is often wanted for.
            do { try recorder.save() } catch {
                let failure = TransferFailure(
                    status: ExitStatus.writeError, message: "cannot write --record \(recorder.path): \(error)")
                report(failure)
                status = failure.status
            }
        }
        return status
    }

    /// Every transfer in turn (with `-Z`, several at once); the status of the last transfer (curl 7.88's rule), or of
    /// the first failure with `--fail-early`. A malformed glob ends the run when its URL is reached (exit 3).
    private func transferAll(with builder: RequestBuilder, client: HTTPClient) async -> Int32 {
        if options.parallel { return await transferInParallel(with: builder, client: client) }
        var queue = TransferQueue(options)
        var pacer = RequestPacer(interval: options.rate?.interval)
        var status = ExitStatus.success
        while true {
            let next: TransferQueue.Transfer
            do throws(TransferFailure) {
                guard let transfer = try queue.next() else { break }
                next = transfer
            } catch {
                report(error)
                return error.status
            }
            await pacer.waitForTurn()
            status = await perform(next, with: builder, client: client)
            if status != ExitStatus.success && options.failEarly { break }
        }
        return status
    }

    /// One transfer with its retries, its failure line and its `-w` output; returns its status.
    func perform(_ planned: TransferQueue.Transfer, with builder: RequestBuilder, client: HTTPClient) async -> Int32 {
        let url = planned.url
        var summary = options.jsonSummary ? JSONSummaryWriter(url: url, sink: standardOutput) : nil
        var retry = TransferRetry(options.retry)
        var status = ExitStatus.success
        var failureMessage: String?
        while true {
            observation?.begin(url: url, index: planned.index)
            var failure: TransferFailure?
            do throws(TransferFailure) {
                let file = try OutputFile(planned.output, url: url, options: options.output)
                if let again = try await transfer(
                    url, to: file, with: builder, client: client,
                    summary: &summary, retry: &retry)
                {
                    await wait(for: again)
                    if !Task.isCancelled { continue }
                    failure = Self.abortedFailure
                }
            } catch {
                if let again = retry.retry(url: url, failure: error) {
                    await wait(for: again)
                    if !Task.isCancelled { continue }
                }
                failure = error
            }
            if var failure {
                // -Z --fail-early: a transfer stopped because another one failed says so, as curl's does.
                if Task.isCancelled { failure = Self.abortedFailure }
                report(failure)
                status = failure.status
                failureMessage = failure.message
            }
            break
        }
        writeOut(status: status, error: failureMessage)
        do throws(TransferFailure) { try standardOutput.release() } catch {
            report(error)
            if status == ExitStatus.success { status = error.status }
        }
        return status
    }

    /// The failure of a transfer `-Z --fail-early` stopped.
    static let abortedFailure = TransferFailure(
        status: ExitStatus.aborted, message: "transfer aborted: another transfer failed (--fail-early)")

    /// `-w`'s output for the transfer just ended.
    private func writeOut(status: Int32, error: String?) {
        // Finished with or without -w: the trace's last TCP_INFO line is written as the transfer ends.
        guard let values = observation?.finish(exitCode: status, error: error), let format = options.writeOut else { return }
        let (pieces, warnings) = WriteOut(format: format).render(values, succeeded: status == ExitStatus.success)
        for warning in warnings { try? standardError.write(warning) }
        for (stream, text) in pieces {
            switch stream {
            case .output: try? standardOutput.write(text)
            case .error: try? standardError.write(text)
            }
        }
    }

    /// curl's warning (unless `-s`), then the wait before a retry.
    private func wait(for retry: TransferRetry.Retry) async {
        warn(retry.warning)
        try? await Task.sleep(for: retry.delay)
    }

    /// Whether the file at `path` can be opened to write (created, empty, when it is not there; never truncated).
    private static func canCreate(_ path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }

    /// curl's socket defaults and switches: `TCP_NODELAY` unless `--no-tcp-nodelay`, keep-alive probes after 60 s
    /// (`--keepalive-time`) unless `--no-keepalive`, and `--interface`'s binding.
    ///
    /// - Throws: `TransferFailure` 45 when `--interface` names neither an interface nor a host (`if!NAME`: no
    ///   interface; `host!NAME`: no host), as curl's "Couldn't bind to".
    static func socketOptions(_ options: FetchOptions) async throws(TransferFailure) -> ClientSocketOptions {
        var socket = ClientSocketOptions()
        socket.noDelay = options.transport.noDelay
        if options.transport.keepAlive {
            // 0 (or more than the kernel takes) leaves the system's timings, as curl's failed setsockopt does.
            let seconds = options.transport.keepAliveTime
            let timing = seconds > 0 && seconds <= 32767 ? seconds : nil
            socket.keepAlive = .init(idle: timing, interval: timing)
        }
        guard var name = options.routing.interface else { return socket }
        var onlyInterface = false
        var onlyHost = false
        if name.hasPrefix("if!") {
            name.removeFirst(3)
            onlyInterface = true
        } else if name.hasPrefix("host!") {
            name.removeFirst(5)
            onlyHost = true
        }
        if !onlyHost, let addresses = NetworkInterfaces.addresses(ofInterface: name) {
            socket.localBinding = .interface(name, addresses: addresses)
        } else if onlyInterface {
            throw TransferFailure(status: ExitStatus.interfaceFailed, message: "Couldn't bind to interface '\(name)'")
        } else {
            // A host name or an address, resolved once for the whole run.
            guard let addresses = try? await SystemResolver().resolve(host: name, port: 0), !addresses.isEmpty else {
                throw TransferFailure(status: ExitStatus.interfaceFailed, message: "Couldn't bind to '\(name)'")
            }
            socket.localBinding = .addresses(addresses)
        }
        return socket
    }

    /// The client's TLS settings for the command line's switches; https works without any, with
    /// the system's trust store.
    static func tlsConfiguration(_ options: FetchOptions.TLSOptions) throws(TransferFailure) -> TLSConfiguration {
        var tls = TLSConfiguration()
        if let file = options.caCertificateFile { tls.trustRoots = .pemFile(file) }
        tls.trustDirectory = options.caDirectory
        if options.insecure {
            tls.waiveVerification()
        } else if options.noVerifyHost {
            tls.certificateVerification = .noHostnameVerification
        }
        tls.certificateChainFile = options.certificateFile
        tls.privateKeyFile = options.keyFile
        if options.minimumVersion == "1.3" { tls.minimumVersion = .tls13 }
        // 1.0 and 1.1 are refused per https URL (RequestBuilder.checkRoute): Wire speaks neither.
        if options.maximumVersion == "1.2" { tls.maximumVersion = .tls12 }
        tls.cipherList = options.ciphers
        tls.tls13CipherSuites = options.tls13Ciphers
        tls.groups = options.curves
        if !options.publicKeyPins.isEmpty { tls.pinning = .publicKey(Set(options.publicKeyPins)) }
        if let pinning = try PinnedCertificates.pinning(
            file: options.pinnedCertificateFile,
            directory: options.pinnedCertificateDirectory)
        {
            tls.pinning = pinning
        }
        // Report-only: the pins move from WireTLS's enforcing check to a hook that warns and proceeds.
        if options.pinReportOnly, let pinning = tls.pinning {
            tls.pinning = nil
            tls.trustEvaluation = PinnedCertificates.reportOnly(pinning)
        }
        return tls
    }

    /// The failure for an error out of a transfer, naming the `--max-time` limit when that is what ran out (the
    /// client's own message rounds the deadline to whole seconds).
    func failure(_ error: any Error) -> TransferFailure {
        if let clientError = error as? HTTPClientError, clientError.code == .deadlineExceeded,
            let maxTime = options.maxTime
        {
            let seconds = JSONSummaryWriter.seconds(maxTime)
            return TransferFailure(
                status: ExitStatus.timedOut,
                message: "operation timed out: the transfer took longer than --max-time \(seconds)s")
        }
        return TransferFailure(any: error)
    }

    /// Prints a failure's line on standard error, unless `-s` without `-S`.
    func report(_ failure: TransferFailure) {
        guard !options.silent || options.showError else { return }
        try? standardError.write(failure.line + "\n")
    }

    /// Prints a warning on standard error, unless `-s`.
    func warn(_ text: String) {
        guard !options.silent else { return }
        try? standardError.write(text)
    }

    /// One URL: the request, the head checks, then the body streamed to its destination; or, for a transient status
    /// with `--retry` left, the retry to make (the body read and dropped, nothing written).
    private func transfer(
        _ url: String, to file: OutputFile, with builder: RequestBuilder, client: HTTPClient,
        summary: inout JSONSummaryWriter?,
        retry: inout TransferRetry
    ) async throws(TransferFailure) -> TransferRetry.Retry? {
        if let target = options.connectTarget {
            try await connect(to: target, via: url, output: file.path, client: client)
            return nil
        }
        var file = file
        observation?.setFilename(file.path)
        let response: HTTPClientResponse
        let resume = OutputResume(options: options, output: file.path)
        let redirects: [RedirectStep]
        var pending: FetchCache.Pending?
        // With -C: the length of the range a 206 continues the file with.
        var rangeLength: Int64?
        do throws(TransferFailure) {
            var plan = try builder.plan(for: url)
            resume?.apply(to: &plan.request)
            if let cache, summary == nil, resume == nil, cookies == nil {
                // The URL as sent (with -G's query), without credentials: the key never holds a password.
                let (step, note) = await cache.begin(plan.request, url: plan.displayURL.description)
                if options.verbose { try? standardError.write("* cache: \(note)\n") }
                switch step {
                case .answer(let entry):
                    try writeCached(entry, to: file.path)
                    return nil
                case .send(let request, let waiting):
                    (plan.request, pending) = (request, waiting)
                }
            }
            (response, redirects) = try await execute(plan, builder: builder, client: client)
            if options.verbose {
                // The heads exactly as the client wrote them, hop by hop through any redirects.
                let metrics = response.metrics.snapshot
                var text = ""
                for hop in redirects {
                    text +=
                        HeadText.verbose(HeadText.lines(ofSent: hop.requestHead), prefix: "> ")
                        + HeadText.verbose(HeadText.lines(of: hop.responseHead), prefix: "< ")
                        + "* following the redirect from \(hop.url)\n"
                }
                // The last hop's URL: the first one's, or where the last redirect led.
                var last = try? HTTPURL(plan.request.url)
                if let step = redirects.last, let location = step.responseHead.headers.first(name: "location") {
                    last = try? step.url.resolving(location)
                }
                if let last { text += Self.verboseProxy(metrics, url: last, note: (try? proxyChoice(for: last))?.note) }
                text +=
                    HeadText.verbose(HeadText.lines(ofSent: metrics.requestHead), prefix: "> ")
                    + HeadText.verboseConnection(metrics)
                    + (metrics.transportSecurity.map { TLSText.verbose($0) } ?? "")
                    + HeadText.verbose(HeadText.lines(of: response.head), prefix: "< ")
                try? standardError.write(text)
            }
            if let headerSink {
                // -D: every head as it came, the redirects' included, as curl writes them.
                for hop in redirects { try headerSink.write(HeadText.raw(hop.responseHead)) }
                try headerSink.write(HeadText.raw(response.head))
            }
            if let path = options.etagSave {
                // curl writes the tag (or nothing, when the response has none) with a line end.
                let tag = response.headers.first(name: "ETag")
                do {
                    try LocalFiles.write(tag.map { Array(($0 + "\n").utf8) } ?? [], toPath: path)
                } catch {
                    throw TransferFailure(
                        status: ExitStatus.writeError, message: "cannot write \(path): \(systemErrorText(error.errno.rawValue))")
                }
            }
            let again = retry.retry(url: url, status: Int(response.status.code), headers: response.headers)
            if let warning = retry.stopWarning { warn(warning) }
            if var again {
                if summary != nil || options.failOnHTTPError || file.takesHeaderName {
                    // Read so the connection can serve the retry; a large body is dropped with its connection.
                    _ = try? await response.body.collect(upTo: 64 * 1024)
                } else {
                    let thrownAway = try await writeFailedAttempt(
                        response, redirects: redirects, to: file, appendingAt: resume?.offset)
                    // curl's note comes after its warning.
                    if thrownAway > 0 { again.warning += "Throwing away \(thrownAway) bytes\n" }
                }
                return again
            }
            if options.failOnHTTPError && response.status.code >= 400 {
                // A small error body is read so the connection can serve the next URL; a large one is dropped.
                _ = try? await response.body.collect(upTo: 64 * 1024)
                throw Self.httpError(response)
            }
            if let max = options.maxFilesize, !options.headOnly,
                let length = response.headers.first(name: "Content-Length").flatMap({ Int64($0) }), length > max
            {
                // curl 7.88 checks the announced length only: a body of unknown length is not limited.
                _ = try? await response.body.collect(upTo: 64 * 1024)
                throw TransferFailure(
                    status: ExitStatus.tooLarge,
                    message: "maximum file size exceeded: the body is \(length) bytes, --max-filesize \(max)")
            }
            // After --fail, as in curl 7.88 (a 416 with --fail is its exit 22); otherwise a 416 is the complete file.
            switch resume?.verdict(status: Int(response.status.code), headers: response.headers) {
            case nil:
                break
            case .append(let length):
                rangeLength = length
            case .alreadyComplete:
                _ = try? await response.body.collect(upTo: 64 * 1024)
                return nil
            case .cannotResume:
                _ = try? await response.body.collect(upTo: 64 * 1024)
                throw TransferFailure(
                    status: ExitStatus.rangeError,
                    message: "HTTP server doesn't seem to support byte ranges. Cannot resume.")
            case .inconsistentLength(let reason):
                _ = try? await response.body.collect(upTo: 64 * 1024)
                throw TransferFailure(status: ExitStatus.rangeError, message: "cannot resume: \(reason)")
            }
            if file.takesHeaderName, let value = response.headers.first(name: "Content-Disposition"),
                let name = OutputFile.dispositionName(value)
            {
                file.path = OutputFile.inDirectory(name, options.output.directory)
            }
        } catch {
            try? summary?.failed(error)
            throw error
        }

        if let pending, let merged = await cache?.notModified(response, pending) {
            _ = try? await response.body.collect(upTo: 64 * 1024)
            if options.verbose { try? standardError.write("* cache: revalidated (304)\n") }
            try writeCached(merged, to: file.path)
            return nil
        }
        let capture = pending.map { _ in BodyCapture() }
        if summary != nil {
            try await streamSummary(response, into: &summary!)
        } else {
            let range = resume.flatMap { resume in rangeLength.map { (offset: resume.offset, length: $0) } }
            var created: String?
            do {
                try await streamBody(
                    response, redirects: redirects, to: file, appending: resume != nil, range: range,
                    capture: capture, created: &created)
            } catch {
                if options.output.removeOnError, let created {
                    OutputFile.remove(created)
                    if options.verbose { try? standardError.write("* removed the output file \(created)\n") }
                }
                throw error
            }
            if options.output.remoteTime, file.isFile, let path = file.path {
                OutputFile.setRemoteTime(of: path, from: response.headers)
            }
            if options.failWithBody && response.status.code >= 400, options.output.removeOnError, let created {
                OutputFile.remove(created)
            }
        }
        if let pending, let cache, let capture {
            let note = await cache.finish(response, body: capture.bytes, pending)
            if options.verbose { try? standardError.write("* cache: \(note)\n") }
        }
        if options.verbose {
            try? standardError.write(HeadText.verboseTimings(response.metrics.snapshot))
        }
        if options.failWithBody && response.status.code >= 400 { throw Self.httpError(response) }
        return nil
    }

    /// curl's failure for an HTTP status of 400 or more with `-f` or `--fail-with-body`.
    static func httpError(_ response: HTTPClientResponse) -> TransferFailure {
        let status = "\(response.status.code) \(response.head.reasonPhrase)"
        return TransferFailure(status: ExitStatus.httpError, message: "the requested URL returned error: \(status)")
    }

    /// `-X CONNECT host:port PROXY`: asks the proxy for a tunnel and writes its answer's head (and the body of a
    /// refusal); a tunnel that opens is closed at once, which is success.
    private func connect(to target: String, via proxy: String, output: String?, client: HTTPClient) async throws(TransferFailure)
    {
        let absolute = HTTPURL.hasScheme(proxy) ? proxy : "http://" + proxy
        var headers = HTTPHeaders()
        for field in options.headers { headers.add(name: field.name, value: field.value) }
        let answer: HTTPConnectResponse
        do { answer = try await client.connect(to: target, via: absolute, headers: headers, timeout: options.maxTime) } catch {
            throw failure(error)
        }
        if options.verbose {
            let metrics = answer.metrics.snapshot
            try? standardError.write(
                HeadText.verbose(HeadText.lines(ofSent: metrics.requestHead), prefix: "> ")
                    + HeadText.verboseConnection(metrics)
                    + HeadText.verbose(HeadText.lines(of: answer.head), prefix: "< "))
        }
        if let tunnel = answer.tunnel { await tunnel.close() }
        if options.failOnHTTPError && answer.status.code >= 400 {
            _ = try? await answer.body.collect(upTo: 64 * 1024)
            throw TransferFailure(
                status: ExitStatus.httpError,
                message: "the proxy answered CONNECT with \(answer.status.code) \(answer.head.reasonPhrase)")
        }
        let sink = try outputSink(output)
        try sink.write(HeadText.raw(answer.head))
        do {
            for try await chunk in answer.body { try sink.write(chunk) }
        } catch {
            throw failure(error)
        }
    }

    /// A response `--retry` will try again, written as curl writes it: on standard output like any answer (after its
    /// head with `-i`), to a file and then thrown away: the file is cut back to where this attempt began, so that it
    /// ends with the last attempt's body. Returns how many bytes were thrown away.
    private func writeFailedAttempt(
        _ response: HTTPClientResponse, redirects: [RedirectStep], to file: OutputFile, appendingAt offset: Int?
    ) async throws(TransferFailure) -> Int {
        var created: String?
        try await streamBody(response, redirects: redirects, to: file, appending: offset != nil, created: &created)
        guard file.isFile, let path = file.path else { return 0 }
        let start = offset ?? 0
        let written = (LocalFiles.regularFileStatus(atPath: path)?.size ?? start) - start
        if written > 0 { try OutputSink.file(path, appending: true).truncate(to: start) }
        return written
    }

    /// Writes the body (after the head with `-i`) to the file or standard output, with a progress bar when wanted.
    /// With `range` (a 206 continuing a file of `offset` bytes), a body longer than the range is refused before its
    /// extra bytes are written and the file cut back to `offset` (exit 33), and one that ends short of it is
    /// a partial transfer (exit 18; the bytes that came are in place, so `-C -` can go on from them). `created` is
    /// set to the file's path once it is open.
    private func streamBody(
        _ response: HTTPClientResponse, redirects: [RedirectStep], to file: OutputFile,
        appending: Bool = false, range: (offset: Int, length: Int64)? = nil,
        capture: BodyCapture? = nil, created: inout String?
    ) async throws(TransferFailure) {
        // Opened only now, so a transfer that fails before its response (or with --fail) leaves no file behind.
        let sink: OutputSink
        if let path = file.path {
            if options.output.createDirectories, file.isFile { try OutputFile.createDirectories(above: path) }
            // -J never overwrites a file (curl: "Failed to open the file: File exists").
            sink = try outputSink(path, appending: appending, exclusive: file.takesHeaderName)
            if file.isFile { created = path }
        } else {
            sink = standardOutput
        }
        let output = file.path
        if options.includeHead || options.headOnly {
            // As curl does with -L: every redirect's head before the final one (the redirect bodies are not shown).
            for hop in redirects { try sink.write(HeadText.raw(hop.responseHead)) }
            try sink.write(HeadText.raw(response.head))
        }
        if options.headOnly {
            // A HEAD answer has no body; with `-I -X GET` (curl's way to see the head of a server that
            // refuses HEAD) the body is read and dropped, so the connection can serve the next URL.
            do {
                for try await _ in response.body {}
            } catch {
                throw failure(error)
            }
            return
        }
        let total = response.headers.first(name: "content-length").flatMap { Int($0) }
        // With -Z, the combined meter instead.
        if let meter { meter.meter.expect(meter.transfer, total: total.map { Int64($0) }) }
        let toFile = output != nil && output != "-"
        let silent = options.silent || options.noProgressMeter
        let wantsBar =
            !options.parallel && !options.progressBar
            && ProgressBar.isWanted(
                total: total, toFile: toFile, silent: silent, stderrIsTerminal: standardError.isTerminal)
        var progress = wantsBar ? ProgressBar(total: total, sink: standardError) : nil
        defer { progress?.finish() }
        // -#: curl's own bar, where curl draws it (on standard error whatever it is).
        let wantsCurlBar =
            !options.parallel && options.progressBar
            && CurlProgressBar.isWanted(
                silent: silent, toStandardOutput: !toFile, standardOutputIsTerminal: standardOutput.isTerminal)
        var curlBar =
            wantsCurlBar
            ? CurlProgressBar(total: total.map { Int64($0) }, initial: Int64(range?.offset ?? 0), sink: standardError) : nil
        defer { curlBar?.finish() }
        var decoding = try BodyDecoding(response, compressed: options.compressed && !options.raw)
        var received: Int64 = 0
        // --limit-rate: the next chunk is taken from the connection only when the limit allows.
        var limit = options.transport.limitRate.map { TransferRateLimit(bytesPerSecond: $0) }
        do {
            for try await chunk in response.body {
                if limit != nil { await limit!.pass(chunk.readableBytes) }
                received += Int64(chunk.readableBytes)
                if let range, received > range.length {
                    try sink.truncate(to: range.offset)
                    throw TransferFailure(
                        status: ExitStatus.rangeError,
                        message: "cannot resume: the 206 answer's body runs past its Content-Range of "
                            + "\(range.length) bytes; nothing appended")
                }
                // The cache keeps the bytes as they came (with their Content-Encoding).
                capture?.append(chunk)
                try decoding.write(chunk, to: sink.write)
                // The bar counts bytes on the wire, against Content-Length (the encoded length).
                progress?.advance(by: chunk.readableBytes)
                curlBar?.advance(by: chunk.readableBytes)
                if let meter { meter.meter.advance(meter.transfer, by: chunk.readableBytes) }
            }
        } catch {
            throw failure(error)
        }
        if let range, received < range.length {
            throw TransferFailure(
                status: ExitStatus.partialBody,
                message: "the 206 answer's body ended \(range.length - received) bytes short of its Content-Range")
        }
        try decoding.finish()
    }

    /// The sink for an output path: standard output (this transfer's) for nil and `-`, else the file.
    private func outputSink(_ path: String?, appending: Bool = false, exclusive: Bool = false) throws(TransferFailure)
        -> OutputSink
    {
        guard let path, path != "-" else { return standardOutput }
        return try OutputSink.file(path, appending: appending, exclusive: exclusive)
    }

    /// Writes a stored response (after its head with `-i`) as if it had come from the network; `-f` applies.
    private func writeCached(_ entry: CachedResponse, to output: String?) throws(TransferFailure) {
        if (options.failOnHTTPError || options.failWithBody) && entry.response.statusCode >= 400 {
            throw TransferFailure(
                status: ExitStatus.httpError,
                message: "the requested URL returned error: \(entry.response.statusCode) (from the cache)")
        }
        let sink = try outputSink(output)
        if options.includeHead || options.headOnly { try sink.write(HeadText.raw(FetchCache.head(of: entry))) }
        if !options.headOnly {
            // Stored as it came: --compressed decodes it here as it would have on the way from the network.
            var decoding = try BodyDecoding(headers: entry.response.headers, compressed: options.compressed)
            try decoding.write(ByteBuffer(bytes: entry.data), to: sink.write)
            try decoding.finish()
        }
    }

    /// Writes the body as the summary's base64 and closes the summary object, with the failure if the body failed.
    private func streamSummary(
        _ response: HTTPClientResponse, into summary: inout JSONSummaryWriter
    ) async throws(TransferFailure) {
        try summary.begin(response.head)
        var bodyFailure: TransferFailure?
        do {
            var decoding = try BodyDecoding(response, compressed: options.compressed && !options.raw)
            var limit = options.transport.limitRate.map { TransferRateLimit(bytesPerSecond: $0) }
            for try await chunk in response.body {
                if limit != nil { await limit!.pass(chunk.readableBytes) }
                try decoding.write(chunk) { piece throws(TransferFailure) in try summary.body(piece) }
            }
            try decoding.finish()
        } catch {
            bodyFailure = failure(error)
        }
        try summary.end(response.metrics.snapshot, failure: bodyFailure)
        if let bodyFailure { throw bodyFailure }
    }
}
