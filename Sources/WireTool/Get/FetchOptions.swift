import Wire

/// A command-line mistake in `wire get` or `wire request`; the tool exits 2.
package struct FetchUsageError: Error, Equatable, Sendable {
    /// What is wrong, for the line on standard error.
    package var message: String
    /// The exit status: 2, or curl's read error (26) for a `-K` file that cannot be read.
    package var status: Int32 = ExitStatus.usage
}

/// The validated options of one `wire get` or `wire request` call, parsed curl's way: short and long spellings,
/// `--name=value` and `-Xvalue` forms, bundled flags (`-sL`), repeatable `-H`, `-d` and `-o`, and `--` to end
/// the options.
///
/// Parsing reads only what curl reads while parsing (a `-K` file, `-w @file`); nothing else is checked on disk, so
/// every rule is unit-testable. Files named by `-d @file` and `--data-binary @file` are opened when the request is
/// built.
package struct FetchOptions: Equatable, Sendable {
    /// One piece of request data, in command-line order.
    package enum DataPart: Equatable, Sendable {
        /// `-d text`: sent as given.
        case text(String)
        /// `-d @file`: the file's contents without CR and LF, as curl sends them.
        case textFile(String)
        /// `--data-binary text`: sent as given.
        case binary(String)
        /// `--data-binary @file`: the file's exact bytes, streamed from disk.
        case binaryFile(String)
        /// `--data-urlencode SPEC`: curl's five forms (`content`, `=content`, `name=content`, `@file`,
        /// `name@file`), the content percent-encoded when the request is built.
        case urlEncoded(String)
        /// `--json text` or `--json @file`: JSON pieces, concatenated without a separator as curl does.
        case json(String)
    }

    /// A limit on how often requests start.
    package struct Rate: Equatable, Sendable {
        /// The time between two request starts.
        package var interval: Duration
    }

    /// Warnings for standard error (a `-K` line whose unquoted value is followed by more words), unless `-s`.
    package var warnings: [String] = []
    /// The URLs, fetched in order.
    package var urls: [String] = []
    /// The method given with `-X`; otherwise GET, HEAD with `-I`, or POST when there is data. As with curl, it
    /// changes the method's name only: whether a body is sent still follows `-d`/`--data-binary`.
    package var method: HTTPMethod?
    /// With `-X CONNECT`: the tunnel's target, `host:port` (the first word that is not an option); the URLs
    /// that follow are the proxies asked.
    var connectTarget: String?
    /// `-I`/`--head`: send HEAD (unless `-X` names another method) and write only the response head.
    package var headOnly = false
    /// Header fields from `-H`, in order (`-H 'Name;'` gives an empty value).
    package var headers: [HeaderField] = []
    /// Field names `-H 'Name:'` removes from what the tool and Wire would send, lower-cased.
    var removedHeaders: Set<String> = []
    /// Request data from `-d` and `--data-binary`, in order.
    package var data: [DataPart] = []
    /// Multipart form fields from `-F`, in order.
    var form: [FormPart] = []
    /// `-G`/`--get`: the data goes into the URL's query and the request is a GET (HEAD with `-I`).
    var dataInQuery = false
    /// `-u user:password`: Basic credentials sent with every request (unless `-H Authorization` is given).
    var credentials: Credentials?
    /// The schemes `-u`'s credentials may go with: `--basic`, `--digest` and `--anyauth` (both) add up, as in curl.
    /// None, or Basic alone: Basic with every request. With Digest: a first request without credentials, then the
    /// answer to its 401's challenge in the strongest scheme offered and allowed, Digest before Basic.
    var authSchemes: Set<AuthScheme> = []

    /// An authentication scheme of `-u`.
    enum AuthScheme: Hashable, Sendable {
        case basic
        /// RFC 7616.
        case digest
    }

    /// Whether `-u`'s credentials wait for the server's challenge instead of going as Basic with every request.
    var answersChallenges: Bool { authSchemes.contains(.digest) }
    /// `-T FILE`: the file sent as the body of a PUT (`-` for standard input).
    var uploadFile: String?
    /// Output files from `-o` and `-O`, paired with the URLs in order.
    package var outputs: [Output] = []
    /// The other output switches (`--output-dir`, `-J`, `-D`, `-R`, ...).
    var output = OutputOptions()
    /// `-i`: write the response head before the body.
    package var includeHead = false
    /// `-v`: the request and response heads and the timings on standard error.
    package var verbose = false
    /// `--fail`: an HTTP status of 400 or more is a failure (exit 22) and its body is not written.
    package var failOnHTTPError = false
    /// `--max-time`: the total time one transfer may take; nil for no limit.
    package var maxTime: Duration?
    /// `--connect-timeout`: how long connecting may take; nil for the client's default.
    package var connectTimeout: Duration?
    /// `-L`: follow redirects.
    package var followRedirects = false
    /// `--max-redirs`: the most redirects followed with `-L`; nil for no limit (curl's `-1`).
    package var maxRedirects: Int? = 50
    /// `--unix-socket`: send every request to this socket, whatever the URL's host.
    package var unixSocket: String?
    /// `-s`: no progress bar, and no failure line unless `-S`.
    package var silent = false
    /// `-S`/`--show-error`: with `-s`, failure lines are still printed.
    var showError = false
    /// `--no-progress-meter`: no progress bar; failure lines as usual.
    var noProgressMeter = false
    /// `-#`/`--progress-bar`: the bar (Wire's only meter) whenever the body goes to a file and standard error is a
    /// terminal, whatever the body's size.
    var progressBar = false
    /// `--stderr FILE`: standard error's lines go to FILE instead (`-` is standard output).
    var errorFile: String?
    /// `-V`/`--version`: print the version and exit.
    var showVersion = false
    /// `--fail-with-body`: an HTTP status of 400 or more exits 22 after the body is written.
    var failWithBody = false
    /// `--fail-early`: the first failed transfer ends the run.
    var failEarly = false
    /// `-g`/`--globoff`: URLs are taken as written, `[]{}` included; without it they are expanded as curl's globs.
    package var globOff = false
    /// `-Z`/`--parallel`: the transfers run at once, `parallelMax` at a time, over the one client's pool.
    package var parallel = false
    /// `--parallel-max N`: the most transfers in flight with `-Z` (curl's default 50, at most 300).
    package var parallelMax = 50
    /// `--parallel-immediate`: curl's switch to open connections at once rather than wait for a multiplexed one;
    /// Wire speaks HTTP/1.1 only, so `-Z` always does, and the switch is accepted for curl's command lines.
    package var parallelImmediate = false
    /// `--rate`: the most request starts per unit of time.
    package var rate: Rate?
    /// `--json-summary`: print one JSON object per URL on standard output instead of the body.
    var jsonSummary = false
    /// `--compressed`: offer `Accept-Encoding: deflate, gzip` and decode the body (without it, bytes pass through as
    /// they came, as with curl).
    package var compressed = false
    /// The proxy switches.
    var proxy = ProxyOptions()
    /// The TLS switches, for https URLs.
    package var tls = TLSOptions()
    /// curl's retry switches.
    package var retry = RetryOptions()
    /// `-C -`/`--continue-at -`: continue each output file from its size (`Range: bytes=<size>-`) and append.
    package var continuesOutput = false
    /// `-C OFFSET`: ask for the body from this byte on (`Range: bytes=OFFSET-`) and append it to the output file.
    package var resumeOffset: Int64?
    /// `-b 'name=value; n2=v2'` (an argument with `=`): sent as the `Cookie` field; the last one given counts.
    package var cookieString: String?
    /// `-b FILE` (an argument without `=`): Netscape cookie files loaded into the cookie engine, in order.
    package var cookieFiles: [String] = []
    /// `-c FILE`: every cookie is written to this Netscape cookie file at the end (`-` for standard output).
    package var cookieJar: String?
    /// Whether received cookies are kept and sent on later requests and redirect hops: with `-b FILE` or `-c`, as
    /// with curl.
    package var cookieEngine: Bool { !cookieFiles.isEmpty || cookieJar != nil }
    /// `--cache-dir`: the directory of an RFC 9111 response cache kept across invocations (a Wire extension).
    var cacheDirectory: String?
    /// `-A`: the `User-Agent` value; empty sends none.
    var userAgent: String?
    /// `-e URL`: the `Referer` sent with the first request.
    var referer: String?
    /// `-e ';auto'`: with `-L`, each hop sends the URL it was redirected from as `Referer`.
    var autoReferer = false
    /// `--oauth2-bearer TOKEN`: sent as `Authorization: Bearer TOKEN`.
    var bearerToken: String?
    /// `-n`, `--netrc-optional`, `--netrc-file`: where credentials may come from a netrc file.
    var netrc = NetrcOptions()
    /// `--path-as-is`: send the path's `.` and `..` segments instead of removing them (RFC 3986 §5.2.4).
    var pathAsIs = false
    /// `--post301`, `--post302`, `--post303`: the redirect statuses after which a POST stays a POST.
    var postRedirects: Set<Int> = []
    /// `--location-trusted`: credentials go on to every host a redirect leads to.
    var locationTrusted = false
    /// `-r RANGE`: sent as `Range: bytes=RANGE`.
    var range: String?
    /// `-z [-]DATE|FILE`: `If-Modified-Since` (with `-`, `If-Unmodified-Since`) for the date, or the file's time.
    var timeCondition: String?
    /// `--etag-compare FILE`: the file's entity tag is sent as `If-None-Match`.
    var etagCompare: String?
    /// `--etag-save FILE`: the response's `ETag` is written to FILE.
    var etagSave: String?
    /// `--max-filesize BYTES`: a response whose `Content-Length` is larger is refused before its body (exit 63).
    var maxFilesize: Int64?
    /// `-w FORMAT` (`@FILE` and `@-` read it from a file or standard input): what to write after each transfer.
    var writeOut: String?
    /// `--trace FILE` or `--trace-ascii FILE` (the last one given): where to dump every byte, and whether as text only.
    var trace: TraceTarget?
    /// `--record FILE` (a Wire extension): every byte of every request and its metrics, saved as a recording.
    var record: String?
    /// `--trace-time`: each trace line starts with the time of day.
    var traceTime = false
    /// `--trace-tcp-info` (a Wire extension): the trace ends each exchange with the connection's `TCP_INFO` sample.
    var traceTCPInfo = false

    /// `--trace FILE` or `--trace-ascii FILE`.
    struct TraceTarget: Equatable, Sendable {
        /// The file; `-` is standard output, `%` standard error.
        var path: String
        /// `--trace-ascii`: text only, no hex columns.
        var ascii: Bool
    }

    /// curl's routing switches: `--resolve`, `--connect-to`, `-4`/`-6`, `--interface`, `--http1.0`.
    var routing = RoutingOptions()
    /// curl's TCP and pacing switches: `--limit-rate`, `--keepalive-time`, `--no-keepalive`, `--tcp-nodelay`,
    /// `--expect100-timeout`.
    var transport = TransportOptions()
    /// `--raw`: the body as it came, chunked framing and content coding included.
    var raw = false
    /// `-j`/`--junk-session-cookies`: session cookies of the `-b` files are not loaded.
    var junkSessionCookies = false

    /// curl's routing switches.
    struct RoutingOptions: Equatable, Sendable {
        /// `--resolve [+|-]HOST:PORT[:ADDR[,ADDR]...]`, in order; read when the transfers start (a bad entry exits 49).
        var resolve: [String] = []
        /// `--connect-to HOST1:PORT1:HOST2:PORT2`, in order; the first that matches a URL's host and port is used.
        var connectTo: [String] = []
        /// `-4` or `-6`: the only address family used; nil for both.
        var family: SocketAddress.Family?
        /// `--interface NAME|ADDRESS|HOST` (with curl's `if!` and `host!` prefixes).
        var interface: String?
        /// `--abstract-unix-socket`: `unixSocket` names a socket in Linux's abstract namespace.
        var abstractUnixSocket = false
        /// `--http1.0` (`-0`): requests say HTTP/1.0.
        var http10 = false
    }

    /// curl's TCP and pacing switches.
    struct TransportOptions: Equatable, Sendable {
        /// `--limit-rate`: bytes per second at most, each way; nil for no limit.
        var limitRate: Int64?
        /// `--no-keepalive`: no TCP keep-alive probes (curl sends them by default).
        var keepAlive = true
        /// `--keepalive-time S`: idle seconds before the first probe and between probes (curl's default 60).
        var keepAliveTime = 60
        /// `--no-tcp-nodelay`: Nagle's algorithm on (curl sets TCP_NODELAY by default).
        var noDelay = true
        /// `--expect100-timeout S`: how long to wait for `100 Continue` (curl's default 1 s).
        var expect100Timeout: Duration = .seconds(1)
    }

    // wire request --raw's neighbour (issue 32).
    /// `--request-target TARGET`: sent as the request target instead of the URL's path and query, as curl's
    /// (`*`, an absolute form); the first request only, redirect hops use their `Location`.
    var requestTarget: String?

    /// `--retry N` and its companions, with curl's meaning (see `TransferRetry`).
    package struct RetryOptions: Equatable, Sendable {
        /// `--retry N`: how many times a transfer that failed with a transient error is tried again; 0 for never.
        package var count = 0
        /// `--retry-delay S`: a fixed wait before each retry instead of the doubling backoff; nil (or 0) for the
        /// backoff.
        package var delay: Duration?
        /// `--retry-max-time S`: no retry starts once this long has passed since the first attempt; nil (or 0) for
        /// no limit.
        package var maxTime: Duration?
        /// `--retry-all-errors`: every failure is transient.
        var allErrors = false
        /// `--retry-connrefused`: a refused connection is transient too.
        var connectionRefused = false

        package init(
            count: Int = 0, delay: Duration? = nil, maxTime: Duration? = nil, allErrors: Bool = false,
            connectionRefused: Bool = false
        ) {
            self.count = count
            self.delay = delay
            self.maxTime = maxTime
            self.allErrors = allErrors
            self.connectionRefused = connectionRefused
        }
    }

    /// curl's TLS switches. Files are only named here; they are read when the client is made.
    package struct TLSOptions: Equatable, Sendable {
        /// `--cacert FILE`: trust these roots instead of the system's.
        package var caCertificateFile: String?
        /// `-k`/`--insecure`: verify nothing (pins still apply, to the leaf).
        package var insecure = false
        /// `--no-verify-host`: skip only the host name (or IP address) check.
        package var noVerifyHost = false
        /// `--pin sha256/BASE64` (repeatable; curl's `sha256//…;sha256//…` also accepted).
        package var publicKeyPins: [String] = []
        /// `--pin-cert FILE`: the peer's chain must contain one of this file's certificates (PEM or DER, by content).
        package var pinnedCertificateFile: String?
        /// `--pinned-cert-dir DIR`: the peer's chain must contain one of the certificates of DIR's `.cer`, `.der` and
        /// `.pem` files (with `--pin-cert`, of either).
        package var pinnedCertificateDirectory: String?
        /// `--pin-report-only`: a pin mismatch is a warning on standard error, and the transfer goes on.
        package var pinReportOnly = false
        /// `--cert FILE`: a client certificate (PEM, with intermediates), for mutual TLS.
        package var certificateFile: String?
        /// `--key FILE`: the client certificate's private key (PEM).
        package var keyFile: String?
        /// `--tlsv1.2`/`--tlsv1.3`: the lowest version offered, as in curl.
        package var minimumVersion: String?
        /// `--tls-max VERSION`: the highest version offered (`1.0`, `1.1`, `1.2`, `1.3`); nil for the default.
        package var maximumVersion: String?
        /// `--capath DIR[:DIR...]`: trust the hashed certificates of these directories too (OpenSSL's c_rehash layout).
        package var caDirectory: String?
        /// `--ciphers LIST`: OpenSSL's cipher list for TLS 1.2.
        package var ciphers: String?
        /// `--tls13-ciphers LIST`: OpenSSL's TLS 1.3 cipher suites.
        package var tls13Ciphers: String?
        /// `--curves LIST`: OpenSSL's key-exchange groups.
        package var curves: String?
    }

    /// One `-H` field.
    package struct HeaderField: Equatable, Sendable {
        /// The field's name as given.
        package var name: String
        /// The value, without the whitespace around it.
        package var value: String
    }

    /// `-u user:password`.
    struct Credentials: Equatable, Sendable {
        /// The user name.
        var user: String
        /// The password.
        var password: String
    }

    /// Where one URL's body goes.
    package enum Output: Equatable, Sendable {
        /// `-o FILE` (`-` is standard output).
        case file(String)
        /// `-O`: a file named after the URL's last path segment (with `-J`, the `Content-Disposition` file name).
        case remoteName
    }

    /// curl's output switches besides `-o` and `-O`.
    struct OutputOptions: Equatable, Sendable {
        /// `--remote-name-all`: every URL without `-o` or `-O` is saved as with `-O`.
        var remoteNameAll = false
        /// `-J`/`--remote-header-name`: with `-O`, the file name of the response's `Content-Disposition`, without any
        /// directory part, and an existing file is never overwritten.
        var remoteHeaderName = false
        /// `--output-dir DIR`: the directory `-o` and `-O` files are written in.
        var directory: String?
        /// `--create-dirs`: the output file's missing directories are made.
        var createDirectories = false
        /// `--remove-on-error`: an output file of a transfer that fails is removed.
        var removeOnError = false
        /// `-D FILE`: every response head is written to FILE (`-` is standard output).
        var headerFile: String?
        /// `-R`/`--remote-time`: the output file's modification time is the response's `Last-Modified`.
        var remoteTime = false
    }

    /// curl's netrc switches: `-n` reads `~/.netrc` and `--netrc-file` another file; `--netrc-optional` reads it
    /// only when it is there.
    struct NetrcOptions: Equatable, Sendable {
        /// Whether a netrc file is read at all.
        var enabled = false
        /// Whether a missing file is no failure.
        var optional = false
        /// `--netrc-file FILE`; nil for `$HOME/.netrc`.
        var file: String?
    }

}
