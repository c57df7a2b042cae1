import Wire

/// One `-w` variable's value, in curl's kinds: each prints the way curl 7.88 prints it.
enum WriteOutValue: Equatable {
    /// Text; nil when there is none (empty in text, `null` in JSON).
    case string(String?)
    /// A whole number.
    case number(Int)
    /// A status code: three digits in text (`000` when there was no answer), a number in JSON.
    case code(Int)
    /// Seconds with six decimals, from microseconds.
    case time(Int)

    /// The value as `-w` writes it in text.
    var text: String {
        switch self {
        case .string(let text): text ?? ""
        case .number(let number): String(number)
        case .code(let code): code < 100 ? String(repeating: "0", count: 3 - String(code).count) + String(code) : String(code)
        case .time(let micros): Self.seconds(micros)
        }
    }

    /// The value in `%{json}`.
    var json: String {
        switch self {
        case .string(nil): "null"
        case .string(let text?): WriteOut.jsonString(text)
        case .number(let number), .code(let number): String(number)
        case .time(let micros): Self.seconds(micros)
        }
    }

    /// `1.000123`: curl's `%u.%06u`.
    static func seconds(_ micros: Int) -> String {
        let fraction = String(micros % 1_000_000)
        return "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }
}

/// The variables of one finished transfer, in curl's units, and the last response's fields for `%header{name}` and
/// `%{header_json}`.
struct WriteOutValues {
    /// Every variable but the switches and the JSON ones, in the order `%{json}` lists them (curl's, by name).
    var variables: [(name: String, value: WriteOutValue)]
    /// The last response's fields.
    var headers: HTTPHeaders

    /// The value of the variable `name`.
    subscript(name: String) -> WriteOutValue? {
        variables.first { $0.name == name }?.value
    }

    /// The values of `transfer`, ended with `exitCode` (and `error`'s message when it failed).
    ///
    /// Times follow curl: each phase of each hop counts from that hop's start (at least 1 µs once reached) and the
    /// hops add up, so after redirects a phase is the sum over the hops; `time_redirect` is the time from the start
    /// to the last hop, `time_total` the whole transfer. A phase that a hop skipped (no lookup and no connect on a
    /// reused connection, no TLS over plain HTTP) took no time: it gets the previous phase's time, so
    /// `time_namelookup ≤ time_connect ≤ time_appconnect ≤ time_pretransfer ≤ time_starttransfer ≤ time_total`.
    init(_ transfer: TransferObservation.Transfer, exitCode: Int32, error: String?) {
        let last = transfer.hops.last
        let snapshot = last?.metrics?.snapshot
        let response = last?.response
        var phases = [Int](repeating: 0, count: 5)
        for hop in transfer.hops {
            guard let timings = hop.metrics?.snapshot.timings else { continue }
            let reached: [Duration?] = [
                timings.nameResolved ?? .zero, timings.connected, timings.secureConnected, hop.pretransfer,
                timings.firstByte,
            ]
            var previous = 0
            for (index, time) in reached.enumerated() {
                let micros = max(previous, max(1, time.map(Self.micros) ?? previous))
                phases[index] += micros
                previous = micros
            }
        }
        // curl's time_queue: the waits for a connection, added over the hops.
        let queue = transfer.hops.reduce(0) { $0 + ($1.metrics.map { Self.micros($0.snapshot.queued) } ?? 0) }
        let end = transfer.end ?? .now
        let total = max(Self.micros(end - transfer.start), phases[4])
        let redirect = transfer.hops.count > 1 ? Self.micros(transfer.hops[transfer.hops.count - 1].start - transfer.start) : 0
        let sizeDownload = snapshot?.bodyBytes ?? 0
        let sizeUpload = last?.uploadBytes ?? 0
        let seconds = Double(max(total, 1)) / 1_000_000
        let remote = snapshot?.remoteAddress
        let local = snapshot?.localAddress
        let certificates = snapshot?.transportSecurity?.peerCertificates ?? []
        let version = response.map { $0.version.minor == 0 ? "\($0.version.major).0" : "\($0.version.major).\($0.version.minor)" }
        let code = Int(response?.status.code ?? 0)
        variables = [
            ("certs", .string(certificates.map(Self.pem).joined())),
            ("content_type", .string(response?.headers.first(name: "Content-Type"))),
            ("errormsg", .string(error)),
            ("exitcode", .number(Int(exitCode))),
            ("filename_effective", .string(transfer.filename)),
            ("ftp_entry_path", .string(nil)),
            ("http_code", .code(code)),
            ("http_connect", .code(0)),
            ("http_version", .string(version ?? "0")),
            ("local_ip", .string(local.map(\.host) ?? "")),
            ("local_port", .number(local?.port ?? 0)),
            ("method", .string(last?.method ?? "GET")),
            ("num_certs", .number(certificates.count)),
            ("num_connects", .number(transfer.hops.filter { $0.metrics.map { !$0.snapshot.isReusedConnection } ?? false }.count)),
            ("num_headers", .number(response?.headers.count ?? 0)),
            ("num_redirects", .number(max(0, transfer.hops.count - 1))),
            ("proxy_ssl_verify_result", .number(0)),
            ("proxy_used", .number(snapshot?.proxy == nil ? 0 : 1)),
            ("redirect_url", .string(transfer.redirectURL)),
            ("referer", .string(last?.referer)),
            ("remote_ip", .string(remote.map(\.host) ?? "")),
            ("remote_port", .number(remote?.port ?? 0)),
            ("response_code", .code(code)),
            ("scheme", .string(remote == nil ? nil : last.map { $0.url.scheme.uppercased() })),
            ("size_download", .number(sizeDownload)),
            ("size_header", .number(transfer.hops.reduce(0) { $0 + $1.headerBytes })),
            ("size_request", .number(transfer.hops.reduce(0) { $0 + $1.requestBytes })),
            ("size_upload", .number(sizeUpload)),
            ("speed_download", .number(Int(Double(sizeDownload) / seconds))),
            ("speed_upload", .number(Int(Double(sizeUpload) / seconds))),
            // A transfer whose certificate did not verify fails (unless -k, which skips verifying): X509_V_OK.
            ("ssl_verify_result", .number(0)),
            ("time_appconnect", .time(phases[2])),
            ("time_connect", .time(phases[1])),
            ("time_namelookup", .time(phases[0])),
            ("time_pretransfer", .time(phases[3])),
            ("time_queue", .time(queue)),
            ("time_redirect", .time(redirect)),
            ("time_starttransfer", .time(phases[4])),
            ("time_total", .time(total)),
            ("url", .string(transfer.url)),
            ("url_effective", .string(last?.url.description ?? transfer.url)),
            ("urlnum", .number(transfer.index)),
            ("curl_version", .string("Wire/\(WireVersion.number)")),
        ]
        headers = response?.headers ?? HTTPHeaders()
    }

    private static func micros(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(0, Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000))
    }

    /// A certificate as PEM.
    private static func pem(_ der: [UInt8]) -> String {
        let base64 = Array(Base64Encoder.encode(der))
        var text = "-----BEGIN CERTIFICATE-----\n"
        var index = 0
        while index < base64.count {
            text += String(base64[index..<min(index + 64, base64.count)]) + "\n"
            index += 64
        }
        return text + "-----END CERTIFICATE-----\n"
    }
}

/// `-w FORMAT`: curl 7.88's `--write-out` language. `%{name}` writes a variable, `%header{name}` the last
/// response's first field of that name, `%{json}` every variable as a JSON object, `%{header_json}` the fields;
/// `%{stdout}` and `%{stderr}` switch where the rest goes, `%{onerror}` ends the output of a transfer that
/// succeeded; `%%`, `\n`, `\r` and `\t` are escapes. An unknown variable is warned of on standard error and
/// writes nothing; any other text is written as it is.
struct WriteOut {
    /// The format as given (the contents of `@file`, or standard input's with `@-`).
    let format: String

    /// Where the pieces go: standard output or standard error.
    enum Stream { case output, error }

    /// Renders the format for `values`; `succeeded` is whether the transfer succeeded (for `%{onerror}`).
    /// - Returns: The pieces in order, each with its stream, and the warnings for standard error.
    func render(_ values: WriteOutValues, succeeded: Bool) -> (pieces: [(Stream, String)], warnings: [String]) {
        var pieces: [(Stream, String)] = []
        var warnings: [String] = []
        var stream = Stream.output
        var text = ""
        func flush() {
            if !text.isEmpty { pieces.append((stream, text)) }
            text = ""
        }
        let characters = Array(format.unicodeScalars)
        var index = 0
        scanning: while index < characters.count {
            let character = characters[index]
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            if character == "%", let next {
                if next == "%" {
                    text += "%"
                    index += 2
                } else if next == "{" {
                    guard let close = characters[(index + 2)...].firstIndex(of: "}") else {
                        text += "%{"
                        index += 2
                        continue
                    }
                    let name = String(String.UnicodeScalarView(characters[(index + 2)..<close]))
                    index = close + 1
                    switch name {
                    case "stdout", "stderr":
                        flush()
                        stream = name == "stdout" ? .output : .error
                    case "onerror":
                        if succeeded { break scanning }
                    case "json": text += Self.json(values)
                    case "header_json": text += Self.headerJSON(values.headers)
                    default:
                        if let value = values[name] {
                            text += value.text
                        } else {
                            warnings.append("wire: unknown --write-out variable: '\(name)'\n")
                        }
                    }
                } else if characters[(index + 1)...].starts(with: "header{".unicodeScalars) {
                    guard let close = characters[(index + 8)...].firstIndex(of: "}") else {
                        text += "%header{"
                        index += 8
                        continue
                    }
                    let name = String(String.UnicodeScalarView(characters[(index + 8)..<close]))
                    text += values.headers.first(name: name) ?? ""
                    index = close + 1
                } else {
                    text.unicodeScalars.append(character)
                    text.unicodeScalars.append(next)
                    index += 2
                }
            } else if character == "\\", let next {
                switch next {
                case "n": text += "\n"
                case "r": text += "\r"
                case "t": text += "\t"
                default:
                    text.unicodeScalars.append(character)
                    text.unicodeScalars.append(next)
                }
                index += 2
            } else {
                text.unicodeScalars.append(character)
                index += 1
            }
        }
        flush()
        return (pieces, warnings)
    }

    /// `%{json}`: every variable, as curl 7.88 writes the object (one line, no line end).
    static func json(_ values: WriteOutValues) -> String {
        "{" + values.variables.map { "\"\($0.name)\":\($0.value.json)" }.joined(separator: ",") + "}"
    }

    /// `%{header_json}`: each field name (lowercased, in the order first seen) with all its values, one name a line,
    /// in curl's layout.
    static func headerJSON(_ headers: HTTPHeaders) -> String {
        var names: [String] = []
        var values: [String: [String]] = [:]
        for field in headers {
            let name = field.name.lowercased()
            if values[name] == nil { names.append(name) }
            values[name, default: []].append(field.value)
        }
        let lines = names.map { name in
            jsonString(name) + ":[" + values[name, default: []].map(jsonString).joined(separator: ",") + "]"
        }
        return "{" + lines.joined(separator: ",\n") + "\n}"
    }

    /// A JSON string of `text`'s UTF-8 bytes.
    static func jsonString(_ text: String) -> String {
        var output: [UInt8] = []
        JSONString.append(text.utf8, to: &output)
        return String(decoding: output, as: UTF8.self)
    }
}
