import Testing
import WireTool
import Wire

/// `wire get` and `wire request` option parsing, curl's spellings.
struct FetchOptionsTests {
    static func get(_ words: [String]) throws(FetchUsageError) -> FetchOptions {
        try FetchOptions(words, requiresMethod: false)
    }

    static func request(_ words: [String]) throws(FetchUsageError) -> FetchOptions {
        try FetchOptions(words, requiresMethod: true)
    }

    static func usageError(_ words: [String], request: Bool = false) -> String? {
        do {
            _ = try request ? Self.request(words) : get(words)
            return nil
        } catch {
            return error.message
        }
    }

    /// Each long spelling parses to the options of its short form; all but `--disable` and `--no-buffer` (accepted,
    /// with nothing to change in Wire) change something.
    @Test(arguments: [
        (["--remote-header-name"], ["-J"]), (["--remote-time"], ["-R"]), (["--dump-header", "h.txt"], ["-D", "h.txt"]),
        (["--show-error"], ["-S"]), (["--user-agent", "UA/1"], ["-A", "UA/1"]),
        (["--referer", "http://r/"], ["-e", "http://r/"]), (["--range", "0-9"], ["-r", "0-9"]),
        (["--time-cond", "Sun, 06 Nov 1994 08:49:37 GMT"], ["-z", "Sun, 06 Nov 1994 08:49:37 GMT"]),
        (["--continue-at", "10"], ["-C", "10"]), (["--netrc"], ["-n"]), (["--disable"], ["-q"]),
        (["--no-buffer"], ["-N"]), (["--progress-bar"], ["-#"]), (["--parallel"], ["-Z"]),
    ])
    func longSpellingsParseAsTheirShortForms(long: [String], short: [String]) throws {
        let longForm = try Self.get(long + ["http://a/"])
        #expect(longForm == (try Self.get(short + ["http://a/"])))
        let changesNothing = ["--disable", "--no-buffer"].contains(long[0])
        #expect((longForm == (try Self.get(["http://a/"]))) == changesNothing)
    }

    @Test func compressedIsAFlag() throws {
        #expect(try Self.get(["--compressed", "-s", "http://a/"]).compressed)
        #expect(try !Self.get(["http://a/"]).compressed)
    }

    @Test func tlsSwitches() throws {
        let pin = "sha256/" + String(repeating: "A", count: 43) + "="
        let options = try Self.get([
            "-sk", "--cacert", "ca.pem", "--no-verify-host", "--pin", pin, "--pinnedpubkey", "sha256//\(pin.dropFirst(7));\(pin)",
            "-E", "c.pem", "--key=k.pem", "--tlsv1.3", "https://a/",
        ])
        #expect(options.tls.insecure && options.tls.noVerifyHost && options.silent)
        #expect(options.tls.caCertificateFile == "ca.pem")
        #expect(options.tls.publicKeyPins == [pin, pin, pin])
        #expect(options.tls.certificateFile == "c.pem" && options.tls.keyFile == "k.pem")
        #expect(options.tls.minimumVersion == "1.3")
        #expect(Self.usageError(["--pin", "sha256/short=", "https://a/"])?.contains("44 characters") == true)
        // Base64 that starts with a slash is not curl's double slash.
        let slashPin = "sha256//" + String(repeating: "B", count: 42) + "="
        #expect(try Self.get(["--pin", slashPin, "https://a/"]).tls.publicKeyPins == [slashPin])
        #expect(Self.usageError(["--pin", "md5/x", "https://a/"])?.contains("sha256/BASE64") == true)
        #expect(Self.usageError(["--cert", "c.pem", "https://a/"])?.contains("--key") == true)
        #expect(Self.usageError(["--pin", pin, "--pin-cert", "p.pem", "https://a/"]) != nil)
    }

    @Test func pinnedCertificateDirectoryAndReportOnly() throws {
        let options = try Self.get(["--pinned-cert-dir", "pins", "--pin-cert=p.pem", "--pin-report-only", "https://a/"])
        #expect(options.tls.pinnedCertificateDirectory == "pins" && options.tls.pinnedCertificateFile == "p.pem")
        #expect(options.tls.pinReportOnly)
        #expect(try Self.get(["--pinned-cert-dir=pins", "https://a/"]).tls.pinReportOnly == false)
        let pin = "sha256/" + String(repeating: "A", count: 43) + "="
        #expect(Self.usageError(["--pin", pin, "--pinned-cert-dir", "pins", "https://a/"])?.contains("not both") == true)
        #expect(Self.usageError(["--pin-report-only", "https://a/"])?.contains("needs --pin") == true)
        #expect(Self.usageError(["--pinned-cert-dir", "", "https://a/"])?.contains("needs a directory") == true)
    }

    @Test func longShortAttachedAndBundledForms() throws {
        let options = try Self.request([
            "-XPOST", "-H", "A: 1", "--header=B:2", "-HC:  3 ", "-sLi", "-o", "one", "--output=two", "-vf",
            "--max-time", "0.5", "--connect-timeout=2", "--max-redirs", "3", "--unix-socket", "/tmp/s", "--rate", "5/m",
            "http://a/", "b", "--", "-c",
        ])
        #expect(options.method == .post)
        #expect(options.headers.map { "\($0.name)=\($0.value)" } == ["A=1", "B=2", "C=3"])
        #expect(options.silent && options.followRedirects && options.includeHead && options.verbose && options.failOnHTTPError)
        #expect(options.outputs == [.file("one"), .file("two")])
        #expect(options.maxTime == .milliseconds(500))
        #expect(options.connectTimeout == .seconds(2))
        #expect(options.maxRedirects == 3)
        #expect(options.unixSocket == "/tmp/s")
        #expect(options.rate?.interval == .seconds(12))
        #expect(options.urls == ["http://a/", "b", "-c"])
    }

    @Test func bundledValueTakesTheNextWord() throws {
        let options = try Self.get(["-so", "out", "http://a/"])
        #expect(options.silent)
        #expect(options.outputs == [.file("out")])
    }

    @Test func dataForms() throws {
        let options = try Self.get(["-d", "a=1", "--data=@form.txt", "http://a/"])
        #expect(options.data == [.text("a=1"), .textFile("form.txt")])
        let binary = try Self.get(["--data-binary", "@disk.img", "http://a/"])
        #expect(binary.data == [.binaryFile("disk.img")])
    }

    @Test func defaults() throws {
        let options = try Self.get(["http://a/"])
        #expect(options.method == nil && options.maxTime == nil && options.maxRedirects == 50 && !options.followRedirects)
        #expect(try Self.get(["--max-time", "0", "--max-redirs", "-1", "http://a/"]).maxTime == nil)
        #expect(try Self.get(["--max-redirs", "-1", "http://a/"]).maxRedirects == nil)
    }

    @Test func rates() throws {
        #expect(try FetchOptions.rate("10/s").interval == .milliseconds(100))
        #expect(try FetchOptions.rate("2/m").interval == .seconds(30))
        #expect(try FetchOptions.rate("1").interval == .seconds(3600))
        #expect(throws: FetchUsageError.self) { try FetchOptions.rate("0/s") }
        #expect(throws: FetchUsageError.self) { try FetchOptions.rate("3/w") }
    }

    @Test(arguments: [
        (["http://a/", "--bogus"], "unknown option '--bogus'"),
        ([String](), "no URL given"),
        (["-o", "x", "-o", "y", "http://a/"], "2 output files for 1 URLs; each -o pairs with one URL"),
        (["-I", "-d", "x", "http://a/"], "choose one method: -I/--head asks for HEAD, -d/--data-binary for POST"),
        (["-H", "no colon", "http://a/"], "a header is 'Name: value', not 'no colon'"),
        (["--max-time", "soon", "http://a/"], "--max-time needs a number of seconds, not 'soon'"),
        (["--json-summary", "-o", "x", "http://a/"], "--json-summary prints to standard output and cannot be combined with -o"),
        (
            ["--data-binary", "@f", "-d", "x", "http://a/"],
            "--data-binary @file is streamed from disk and cannot be combined with other data"
        ),
        (["http://a/", "-o"], "-o needs a value"),
        (["-sY", "http://a/"], "unknown option '-Y' in '-sY'"),
    ])
    func usageErrors(words: [String], message: String) {
        #expect(Self.usageError(words) == message)
    }

    @Test func getTakesXAndIAsCurlDoes() throws {
        let put = try Self.get(["-XPUT", "http://a/"])
        #expect(put.method == HTTPMethod("PUT") && put.data.isEmpty && !put.headOnly)
        let head = try Self.get(["-sI", "http://a/"])
        #expect(head.headOnly && head.silent && head.method == nil)
        let long = try Self.get(["--head", "--request=GET", "http://a/"])
        #expect(long.headOnly && long.method == .get)
        #expect(Self.usageError(["-X", "GE T", "http://a/"]) == "invalid method 'GE T'")
    }

    @Test func requestNeedsAValidMethod() {
        #expect(Self.usageError(["http://a/"], request: true) == "wire request needs -X METHOD")
        #expect(Self.usageError(["-X", "GE T", "http://a/"], request: true) == "invalid method 'GE T'")
    }
}
