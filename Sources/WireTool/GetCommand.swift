import ArgumentParser
import Glibc

/// `wire get`: fetches URLs with GET (POST with `-d`, HEAD with `-I`, any method with `-X`), the way curl does.
///
/// ```
/// wire get http://localhost:8080/ -o index.html
/// wire get -sL --max-time 5 http://localhost:8080/a http://localhost:8080/b --json-summary
/// wire get -I http://localhost:8080/big.iso
/// ```
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Fetch URLs with GET (POST with -d, HEAD with -I, any method with -X), curl-style.",
        usage: "wire get [options] URL...",
        discussion: FetchHelp.text
    )

    /// Every word after `get`, parsed by `FetchOptions`, so that a usage error exits 2 (as in curl) rather than with
    /// the argument parser's 64, and curl's spellings (`-XPOST`, `-sL`, repeated `-o`) work as they do there.
    @Argument(parsing: .allUnrecognized, help: .hidden)
    var words: [String] = []

    func run() async throws {
        try await FetchHelp.run(words, command: "get", requiresMethod: false)
    }
}

/// `wire request`: sends requests with any method (`-X`), the way curl does.
///
/// ```
/// wire request -X DELETE http://localhost:8080/items/7
/// wire request -X PUT --data-binary @disk.img http://localhost:8080/upload
/// wire request -X CONNECT example.org:443 http://proxy.local:3128/
/// ```
struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send requests with any method (-X METHOD), curl-style.",
        usage: "wire request -X METHOD [options] URL...\n       wire request --raw FILE|- [raw options] URL",
        discussion: FetchHelp.text + "\n\n" + RawRequest.help
    )

    /// Every word after `request`, parsed by `FetchOptions` (see `GetCommand.words`).
    @Argument(parsing: .allUnrecognized, help: .hidden)
    var words: [String] = []

    func run() async throws {
        try await FetchHelp.run(words, command: "request", requiresMethod: true)
    }
}

/// What `wire get` and `wire request` share: the option list and the run that parses words and fetches.
enum FetchHelp {
    /// The options and exit statuses, for `--help`.
    static let text = """
        Options:
          -X, --request METHOD      Use METHOD's name instead of GET/POST/HEAD; as in curl, whether a body is sent \
        still follows -d (required by wire request). -X CONNECT HOST:PORT PROXY-URL asks the proxy for a \
        tunnel and writes its answer's head.
          -I, --head                Send HEAD and write only the response head (with -X, that method, body dropped).
          -H, --header 'Name: value'
                                    Add a header field (repeatable).
          -F, --form NAME=VALUE|NAME=@FILE[;type=T][;filename=F]|NAME=<FILE
                                    Send a multipart form (POST unless -X), as curl builds it; repeatable.
          -d, --data DATA|@FILE     Send DATA (a file without its line ends with @FILE; @- reads standard input); \
        POST unless -X; several are joined with '&'.
              --data-binary DATA|@FILE
                                    Send DATA, or FILE's exact bytes streamed from disk.
              --data-raw DATA       Send DATA as given, '@' included.
              --data-urlencode [NAME]=CONTENT|[NAME]@FILE|CONTENT
                                    Send CONTENT (or FILE's whole contents) percent-encoded, as curl does.
              --json DATA|@FILE     Send JSON (pieces concatenated), with Content-Type and Accept application/json.
          -G, --get                 Put the data in the URL's query and send GET (HEAD with -I).
          -u, --user USER:PASSWORD  Send Basic credentials (unless -H gives an Authorization field).
          -T, --upload-file FILE    PUT FILE (streamed from disk with its length; - or . streams standard input chunked); a URL ending in '/'         gets the file's name.
          -K, --config FILE         Read options from FILE (- standard input) where -K stands, in curl's syntax: one \
        per line, 'name value', 'name = value' or 'name: value' (long names need no --), values in double quotes \
        with \\t \\n \\r \\v escapes, '#' comments, 'url = URL' lines; a line wire does not know exits 2, an \
        unreadable file 26. No file is read without -K (not ~/.curlrc).
          -o, --output FILE         Write the body to FILE (repeatable: each -o pairs with one URL, in order; - is \
        standard output).
          -C, --continue-at -       Continue the -o file from its size (Range: bytes=SIZE-) and append; a server \
        that cannot send that range exits 33 and leaves the file; a 416 means the file is complete.
          -g, --globoff             Take URLs as written. Without it, URLs are curl's globs: [1-100], [001-100], \
        [a-z], [1-100:10], {one,two}, several in one URL; each -o pairs with one URL and its #1, #2... are the values \
        of each of its URLs; a malformed glob exits 3.
          -Z, --parallel            Run the transfers at once, over one connection pool (a body for standard output \
        is written whole when its transfer ends; -w and --json-summary write one line per transfer).
              --parallel-max N      At most N transfers at once with -Z (default 50, at most 300).
              --parallel-immediate  Accepted for curl's command lines: with HTTP/1.1, -Z transfers always start at once.
              --fail-early          Stop at the first failed transfer (with -Z, cancel the others) and exit with its status.
          -i, --include             Write the response head before the body.
              --compressed          Ask for a gzip or deflate body (Accept-Encoding: deflate, gzip) and write it \
        decoded; without it the body is written as it came.
          -v, --verbose             Show the request and response heads and the timings on standard error.
          -f, --fail                An HTTP status of 400 or more exits 22 and writes no body.
          -m, --max-time SECONDS    Limit each transfer's total time (fractions allowed).
              --connect-timeout SECONDS
                                    Limit the time to connect.
          -L, --location            Follow redirects.
              --max-redirs N        Follow at most N redirects (default 50; -1 for no limit).
              --unix-socket PATH    Connect to this Unix socket, whatever the URL's host.
              --abstract-unix-socket NAME
                                    Connect to this name in Linux's abstract Unix namespace instead.
              --resolve [+]HOST:PORT:ADDR[,ADDR]...
                                    Use these addresses for HOST and PORT (* for any host; -HOST:PORT takes an         entry back; + makes it last 60 s); a bad entry exits 49.
              --connect-to HOST1:PORT1:HOST2:PORT2
                                    Connect to HOST2:PORT2 for requests to HOST1:PORT1 (empty parts: any, or the         same); TLS and Host still name the URL's host.
          -4, --ipv4 / -6, --ipv6   Use only IPv4 or IPv6 addresses.
              --interface NAME|ADDRESS|HOST
                                    Send from this interface (tied to it where allowed, else its address; if!NAME,         host!HOST as in curl); exit 45 when it cannot be used.
          -0, --http1.0 / --http1.1 Say HTTP/1.0 on the request line (no Expect), or HTTP/1.1 (the default).
              --limit-rate SPEED    Move at most SPEED bytes per second each way (K, M, G suffixes), reading the         body only as fast: the sender is held back.
              --keepalive-time S    Probe an idle connection after S seconds, then every S seconds (default 60).
              --no-keepalive        No TCP keep-alive probes (--keepalive turns them back on).
              --tcp-nodelay / --no-tcp-nodelay
                                    TCP_NODELAY, on by default as in curl.
              --expect100-timeout S Wait this long for 100 Continue before sending a body anyway (default 1 s; -T         asks for any body, a POST above 1 MiB).
              --raw                 Write the body as it came: chunked framing and content coding included.
          -j, --junk-session-cookies
                                    Load no session cookies from -b files.
              --request-target TARGET
                                    Send TARGET as the request target instead of the URL's path and query (curl's; \
        '*' for OPTIONS *, an absolute form); the first request only, redirects use their Location.
          -b, --cookie DATA|FILE    Send DATA ('name=value; n2=v2') as Cookie; an argument without = is a \
        Netscape cookie file to load, and turns on the cookie engine (cookies kept and sent at every redirect hop).
          -c, --cookie-jar FILE     Write every cookie to FILE (curl's format) at the end; turns on the cookie engine.
          -s, --silent              No progress bar.
              --rate N/s|N/m|N/h|N/d
                                    Start at most N requests per second, minute, hour or day.
              --json-summary        Print one JSON object per URL on standard output instead of the body \
        (its url, status, version, headers, body_b64, reused, timings; with -Z one line per transfer as it ends).
              --cacert FILE         Trust the CA certificates of this PEM file instead of the system's.
          -k, --insecure            Do not verify the server's certificate (pins still apply, to its leaf).
              --no-verify-host      Verify the chain but not that it names the host.
              --pin sha256/BASE64   Require a certificate of the verified chain with this public-key pin \
        (repeatable; -v prints each certificate's pin).
              --pin-cert FILE       Require one of this file's certificates (PEM or DER) in the verified chain.
              --pinned-cert-dir DIR Require one of the certificates of DIR's .cer, .der and .pem files (PEM or DER) \
        in the verified chain; an empty or unreadable DIR exits 58.
              --pin-report-only     With a pin flag, a mismatch prints a warning on standard error and the \
        transfer goes on, instead of exiting 90 (to try a pin before enforcing it); not with -k.
          -E, --cert FILE           Present this client certificate (PEM, with intermediates); needs --key.
              --key FILE            The client certificate's private key (PEM).
              --tlsv1.2, --tlsv1.3  The lowest TLS version to use (the highest is 1.3).
              --tls-max VERSION     The highest TLS version to offer (1.2, 1.3 or default; 1.0 and 1.1 leave none: 35).
              --capath DIR[:DIR]    Trust the certificates of these hashed directories (openssl rehash) too.
              --ciphers LIST, --tls13-ciphers LIST, --curves LIST
                                    OpenSSL's cipher list (TLS 1.2), TLS 1.3 suites, key-exchange groups; a list         OpenSSL refuses exits 59.
              --retry N             Retry a transfer that failed with a transient error (a timeout, an unknown host, \
        HTTP 408, 429, 500, 502, 503 or 504) up to N times, waiting 1 s, then twice as long each time up to 10 \
        minutes, or as long as the server's Retry-After says; warns on standard error before each retry. A failed \
        answer's body is written as curl writes it (to a file, then thrown away).
              --retry-delay SECONDS Wait this long before each retry instead (fractions allowed; 0: the backoff).
              --retry-max-time SECONDS
                                    Start no retry once this long has passed since the first attempt, the wait \
        not counted, unless a Retry-After would end past it (0: no limit).
              --retry-all-errors    With --retry, retry every failure (with -f, HTTP 4xx too).
              --retry-connrefused   With --retry, retry a refused connection too.
          -w, --write-out FORMAT|@FILE
                                    After each transfer write FORMAT with curl's variables (%{http_code}, \
        %{time_total}, %{json}, %header{name}, ...; \\n, %% escapes; %{stderr} switches to standard error).
              --trace FILE, --trace-ascii FILE
                                    Dump every byte sent and received to FILE (- standard output), as hex and \
        text or as text only, in curl's layout; https is shown in plaintext.
              --trace-time          Start each trace line with the time of day.
              --trace-tcp-info      End each exchange in the trace with the kernel's TCP_INFO for its connection \
        (smoothed RTT and variance, retransmits, congestion window, delivery rate, bytes acked; a Wire extension).
              --cache-dir DIR       Cache responses in DIR across invocations, as RFC 9111 allows (a Wire extension): fresh answers come from DIR without a request, stale ones are revalidated; -v says which.
              --record FILE         Record every byte written and read (plaintext, with times and write/read \
        boundaries) and each request's metrics to FILE, mode 0600 (a Wire extension; see wire record, wire replay).

        Several URLs (and the URLs of a glob) are fetched in turn over one keep-alive connection pool; with -Z, \
        several at once over that pool.

        Exit status, as curl's: 0 success, 2 usage, 3 malformed URL, 6 unknown host, 7 could not connect, \
        8 malformed reply, 18 body shorter than announced, 22 HTTP error with --fail, 23 write error, 25 -T - with --http1.0 (no chunked coding), 26 read error (also an unreadable -K file, an --etag-save file that cannot be created), \
        28 timeout, 33 cannot resume (-C -), 35 TLS handshake failure, 45 --interface cannot be used, 47 too many \
        redirects, 49 bad --resolve or --connect-to entry, 52 empty reply, 55 send error, \
        56 receive error, 58 local certificate problem, 59 cipher list refused, 60 server certificate not verified, \
        61 bad content encoding (--compressed), 90 pinned public key mismatch. With several \
        URLs, the status of the last transfer (with -Z, of the last to fail).
        """

    /// Parses `words` and runs the transfers; throws the exit status when it is not 0.
    static func run(_ words: [String], command: String, requiresMethod: Bool) async throws {
        // `wire request --raw`: bytes as written, none of a fetch's options (Raw/RawRequest.swift).
        if command == "request" && RawRequestOptions.isRaw(words) {
            try await RawRequest.run(words)
            return
        }
        let options: FetchOptions
        do {
            options = try FetchOptions(words, requiresMethod: requiresMethod)
        } catch {
            // curl's shape, on one line: `curl: (2) …` is `wire: (2) …`. Printed even with -s, as curl prints it.
            let help = error.status == ExitStatus.usage ? " (see 'wire \(command) --help')" : ""
            StandardStreams.error("wire: (\(error.status)) \(error.message)\(help)\n")
            throw ExitCode(error.status)
        }
        if !options.silent {
            for warning in options.warnings { StandardStreams.error(CurlWarning.text(warning)) }
        }
        if options.showVersion {
            StandardStreams.output(WireVersion.text)
            return
        }
        // A reader that goes away (`wire get … | head`) must give EPIPE, reported as a write error (23), not kill
        // the process silently.
        signal(SIGPIPE, SIG_IGN)
        let status = await Fetcher(options: options).run()
        if status != ExitStatus.success { throw ExitCode(status) }
    }
}
