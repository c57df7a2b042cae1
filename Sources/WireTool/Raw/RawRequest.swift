import ArgumentParser
import FoundationEssentials
import Glibc
import Wire
import WireTLS

/// `wire request --raw FILE|- URL`: sends bytes exactly as written (no normalization of anything) over TCP, TLS
/// (`https://`) or a Unix socket, cut into writes as `--split`, `--segments` or `--mark` say, and prints what came
/// back as `RawResponseReport` lines.
///
/// Exit status: 0 when everything received parsed, 1 on a parse verdict (error or incomplete), 2 usage, 7 could not
/// connect, 26 the bytes or a segments file could not be read, 35 TLS handshake failure.
enum RawRequest {
    /// The option list, for `wire request --help`.
    static let help = """
        Raw requests (wire request --raw FILE|- [options] URL):
              --raw FILE|-          Send FILE's bytes (- reads standard input) exactly as written, then print one \
        JSON line per response read back (status, fields, body size and SHA-256, the parser's verdict) and one for \
        how the connection ended. An https:// URL sends them over TLS (-k, --cacert apply).
              --split SPEC          Cut the bytes into writes: comma-separated items N (a write starts at byte N), \
        N@DELAY (after waiting DELAY: 250us, 50ms, 1.5s), @DELAY (before the first write), *N[@DELAY] (a write every \
        N bytes from there on).
              --segments FILE       The --split items from FILE, one or more a line, # starting a comment.
              --mark TEXT           Each TEXT in the bytes starts a new write and is not sent.
              --delay DELAY         Wait DELAY before each write that names no delay of its own.
              --half-close          Send end of stream (FIN) after the last write and keep reading.
              --reset               Reset the connection (RST) once the last write has left.
              --read-timeout S      End as "timeout" when nothing arrives for S seconds after the last write \
        (default 5).
              --dump-received FILE  Write every received byte to FILE, as it came.
              --record FILE         Record the exchange (every write and read, timed, and each side's end) to \
        FILE, mode 0600, for wire replay and wire record export-har.
              --lenient             Read the answers with the lenient parser instead of the client's.
        """

    /// Parses `words` (everything after `request`) and runs the exchange; throws the exit status when not 0.
    static func run(_ words: [String]) async throws {
        let options: RawRequestOptions
        do {
            options = try RawRequestOptions(words)
        } catch {
            StandardStreams.error("wire: (\(ExitStatus.usage)) \(error.message) (see 'wire request --help')\n")
            throw ExitCode(ExitStatus.usage)
        }
        signal(SIGPIPE, SIG_IGN)
        let status = await execute(options)
        if status != ExitStatus.success { throw ExitCode(status) }
    }

    private static func fail(_ status: Int32, _ message: String) -> Int32 {
        StandardStreams.error("wire: (\(status)) \(message)\n")
        return status
    }

    /// Reads the bytes and the plan, connects, exchanges and reports; returns the exit status.
    static func execute(_ options: RawRequestOptions) async -> Int32 {
        var payload: [UInt8]
        do {
            payload =
                options.source == "-"
                ? try LocalFiles.readToEnd(STDIN_FILENO) : try LocalFiles.contents(atPath: options.source)
        } catch {
            return fail(ExitStatus.readError, "cannot read \(options.source): \(error)")
        }
        let writes: [RawSegmentPlan.Write]
        do {
            var plan = RawSegmentPlan()
            if let mark = options.mark {
                (payload, plan) = RawSegmentPlan.cutting(payload, at: Array(mark.utf8))
            }
            if let split = options.split { plan.items += try RawSegmentPlan(parsing: split, option: "--split").items }
            if let file = options.segmentsFile {
                let text: [UInt8]
                do { text = try LocalFiles.contents(atPath: file) } catch {
                    return fail(ExitStatus.readError, "cannot read --segments \(file): \(error)")
                }
                plan.items += try RawSegmentPlan(parsing: String(decoding: text, as: UTF8.self), option: file).items
            }
            writes = try plan.writes(length: payload.count, defaultDelay: options.delay)
        } catch {
            return fail(ExitStatus.usage, error.message)
        }
        let target: RawRequestOptions.Target
        do { target = try options.target() } catch { return fail(ExitStatus.usage, error.message) }

        let loop: EventLoop
        do { loop = try EventLoop(name: "wire-raw") } catch {
            return fail(ExitStatus.generic, "cannot start an event loop: \(error)")
        }
        defer { loop.shutdown() }
        let outcome: RawOutcome
        var wallClock = Timestamp.now()
        switch await connect(options, target: target, on: loop) {
        case .failure(let failure):
            return fail(failure.status, failure.message)
        case .success(let streams):
            // The recording starts with the exchange, as its times do.
            wallClock = Timestamp.now()
            let bytes = payload
            let ending = options.ending
            let readTimeout = options.readTimeout
            let records = options.record != nil
            outcome = await withCheckedContinuation { (continuation: CheckedContinuation<RawOutcome, Never>) in
                loop.execute(
                    {
                        let exchange = RawExchange(
                            stream: streams.stream.value, socket: streams.socket.value, payload: bytes, writes: writes,
                            ending: ending, readTimeout: readTimeout
                        ) { continuation.resume(returning: $0) }
                        exchange.recordsEvents = records
                        exchange.start()
                    }, ifClosed: { continuation.resume(returning: RawOutcome(end: .failed("the event loop closed"))) })
            }
        }
        if let dump = options.dumpReceived {
            do {
                if dump == "-" {
                    try LocalFiles.writeAll(outcome.received, to: STDERR_FILENO)
                } else {
                    try LocalFiles.write(outcome.received, toPath: dump)
                }
            } catch {
                return fail(ExitStatus.writeError, "cannot write --dump-received \(dump): \(error)")
            }
        }
        if let record = options.record {
            do {
                try LocalFiles.replaceContents(
                    atPath: record, with: RawRequest.recording(outcome, url: options.url, wallClock: wallClock))
            } catch {
                return fail(ExitStatus.writeError, "cannot write --record \(record): \(error)")
            }
        }
        var output = JSONLineWriter()
        var report = RawResponseReport()
        report.write(outcome, requestBytes: payload, lenient: options.lenient, into: &output)
        output.flush()
        return report.parsedCleanly ? ExitStatus.success : ExitStatus.generic
    }

    /// `--record`'s file: the exchange as connection 0 of a client recording (no metrics: none are measured here).
    static func recording(_ outcome: RawOutcome, url: String, wallClock: Double) -> [UInt8] {
        var lines = [RecordFile.header(role: .client, url: url, wallClock: wallClock)]
        for event in outcome.events {
            var line = RecordLine(type: event.bytes == nil ? .end : .data)
            line.t = RecordFile.seconds(event.t)
            line.conn = 0
            line.dir = event.out ? .out : .in
            line.data = event.bytes.map { Data($0) }
            lines.append(line)
        }
        return RecordFile.encode(lines)
    }

    /// A failure before any byte was sent: the exit status and its line.
    struct ConnectFailure: Error {
        var status: Int32
        var message: String
    }

    /// The connected stream (TLS over the socket for https) and the socket itself.
    struct Streams: Sendable {
        var stream: LoopBound<any ByteStream>
        var socket: LoopBound<SocketStream>
    }

    /// Resolves, connects and, for https, completes the TLS handshake, within `--connect-timeout`.
    static func connect(
        _ options: RawRequestOptions, target: RawRequestOptions.Target, on loop: EventLoop
    ) async -> Result<Streams, ConnectFailure> {
        let deadline = Deadline.after(options.connectTimeout)
        let addresses: [SocketAddress]
        let name = options.unixSocket ?? target.host
        do {
            if let path = options.unixSocket {
                addresses = [try SocketAddress(unixPath: path)]
            } else {
                addresses = try await SystemResolver().resolve(host: target.host, port: target.port)
            }
        } catch {
            return .failure(ConnectFailure(status: ExitStatus.unknownHost, message: "cannot resolve \(name): \(error)"))
        }
        let timeout = options.connectTimeout
        let port: Int? = options.unixSocket == nil ? target.port : nil
        let connected: Result<Streams, ConnectFailure> = await withCheckedContinuation { continuation in
            loop.execute(
                {
                    let race = ConnectionRace(
                        addresses: addresses, host: name, port: port, loop: loop, deadline: deadline,
                        timeout: timeout, attemptDelay: .milliseconds(250)
                    ) { result in
                        switch result {
                        case .success(let socket):
                            do {
                                let stream = try SocketStream(socket: socket, on: loop)
                                continuation.resume(
                                    returning: .success(
                                        Streams(stream: LoopBound(stream, loop: loop), socket: LoopBound(stream, loop: loop))))
                            } catch {
                                try? socket.close()
                                continuation.resume(
                                    returning: .failure(ConnectFailure(status: ExitStatus.couldNotConnect, message: "\(error)")))
                            }
                        case .failure(let error):
                            let status = error.reason == .timedOut ? ExitStatus.timedOut : ExitStatus.couldNotConnect
                            continuation.resume(returning: .failure(ConnectFailure(status: status, message: error.description)))
                        }
                    }
                    race.start()
                },
                ifClosed: {
                    continuation.resume(returning: .failure(ConnectFailure(status: ExitStatus.generic, message: "loop closed")))
                })
        }
        guard target.isTLS, case .success(let plain) = connected else { return connected }
        var configuration = HTTPClientConfiguration()
        do { configuration.tls = try Fetcher.tlsConfiguration(options.tls) } catch {
            try? await loop.submit { plain.socket.value.close(error: nil) }
            return .failure(ConnectFailure(status: ExitStatus.localCertificate, message: "\(error)"))
        }
        guard let security = configuration.transportSecurity else { return connected }
        do {
            let secured = try await security.secure(plain.stream, host: target.host, port: target.port, deadline: deadline)
            return .success(Streams(stream: secured, socket: plain.socket))
        } catch {
            return .failure(ConnectFailure(status: ExitStatus.tlsHandshake, message: "TLS handshake: \(error)"))
        }
    }
}
