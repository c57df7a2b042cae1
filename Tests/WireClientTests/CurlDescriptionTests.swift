import Foundation
import Testing
import WireTestSupport
import Wire
import WireClient

/// Issue 13 item 7: `ClientRequest.curlDescription` is a command that runs in a shell and gives curl exactly the
/// intended arguments.
@Suite(.sharedIO(minutes: 1)) struct CurlDescriptionTests {
    /// One request, the arguments curl must receive (after `curl`), and the bytes on its standard input.
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var request: ClientRequest
        var argv: [[UInt8]]
        var stdin: [UInt8] = []
        var description: String { name }
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static let oddBody: [UInt8] =
        Array("it's \"quoted\" $HOME `id` \\n\r\nline2\t".utf8) + [0xFF, 0xC3, 0x28, 0x80, 0x7F, 0x01, 0xE9]

    static var cases: [Case] {
        let url = URL(string: "http://h/a")!
        var list: [Case] = []
        list.append(
            Case(
                name: "plain GET", request: ClientRequest(url: url),
                argv: ["-H", "User-Agent:", "-H", "Accept:", "http://h/a"].map(bytes)))
        var headers = HTTPHeaders()
        headers.add(name: "X-Quote", value: #"it's "q" $HOME `id` \ ;|&"#)
        headers.add(name: "X-Empty", value: "")
        headers.add(name: "X-Tab", value: "a\tb")
        headers.add(name: "X-Unicode", value: "café ☕")
        headers.add(name: "User-Agent", value: "Wire/1 (it's)")
        headers.add(name: "Accept", value: "*/*")
        list.append(
            Case(
                name: "odd header values", request: ClientRequest(url: url, headers: headers),
                argv: [
                    "-H", #"X-Quote: it's "q" $HOME `id` \ ;|&"#, "-H", "X-Empty;", "-H", "X-Tab: a\tb",
                    "-H", "X-Unicode: café ☕", "-H", "User-Agent: Wire/1 (it's)", "-H", "Accept: */*", "http://h/a",
                ].map(bytes)))
        list.append(
            Case(
                name: "binary POST body", request: ClientRequest(url: url, method: "POST", body: .data(Data(oddBody))),
                argv: ["-H", "User-Agent:", "-H", "Accept:", "-H", "Content-Type:", "-H", "Expect:", "--data-binary"].map(bytes)
                    + [oddBody, bytes("http://h/a")]))
        let nulBody: [UInt8] = [0x00, 0x41, 0x25, 0x5C, 0x27, 0x00, 0xFF, 0x0A]
        list.append(
            Case(
                name: "body with NUL bytes", request: ClientRequest(url: url, method: "PUT", body: .data(Data(nulBody))),
                argv: [
                    "-X", "PUT", "-H", "User-Agent:", "-H", "Accept:", "-H", "Content-Type:", "-H", "Expect:",
                    "--data-binary", "@-", "http://h/a",
                ].map(bytes), stdin: nulBody))
        list.append(
            Case(
                name: "body starting with @",
                request: ClientRequest(url: url, method: "POST", body: .data(Data("@/etc/passwd".utf8))),
                argv: [
                    "-H", "User-Agent:", "-H", "Accept:", "-H", "Content-Type:", "-H", "Expect:",
                    "--data-raw", "@/etc/passwd", "http://h/a",
                ].map(bytes)))
        list.append(
            Case(
                name: "GET with a body", request: ClientRequest(url: url, body: .data(Data("x".utf8))),
                argv: [
                    "-X", "GET", "-H", "User-Agent:", "-H", "Accept:", "-H", "Content-Type:", "-H", "Expect:",
                    "--data-binary", "x", "http://h/a",
                ].map(bytes)))
        list.append(
            Case(
                name: "file body", request: ClientRequest(url: url, method: "POST", body: .file(path: "/tmp/it's a file")),
                argv: [
                    "-H", "User-Agent:", "-H", "Accept:", "-H", "Content-Type:", "-H", "Expect:",
                    "--data-binary", "@/tmp/it's a file", "http://h/a",
                ].map(bytes)))
        let stream = ClientRequest(url: url, method: "POST", body: .stream(length: 5) { AsyncThrowingStream { $0.finish() } })
        list.append(
            Case(
                name: "stream body", request: stream,
                argv: [
                    "-X", "POST", "-H", "User-Agent:", "-H", "Accept:", "-H", "Content-Type:", "-H", "Expect:",
                    "http://h/a",
                ].map(bytes)))
        list.append(
            Case(
                name: "HEAD", request: ClientRequest(url: url, method: "HEAD"),
                argv: ["--head", "-H", "User-Agent:", "-H", "Accept:", "http://h/a"].map(bytes)))
        list.append(
            Case(
                name: "lower-case method", request: ClientRequest(url: url, method: "get"),
                argv: ["-X", "get", "-H", "User-Agent:", "-H", "Accept:", "http://h/a"].map(bytes)))
        let unicode = try! BaseURL("http://h/v1").resolve("café/it's?q=a b&x=ü#frag")
        list.append(
            Case(
                name: "unicode URL", request: ClientRequest(url: unicode),
                argv: ["-H", "User-Agent:", "-H", "Accept:", "http://h/v1/caf%C3%A9/it's?q=a%20b&x=%C3%BC"].map(bytes)))
        let ipv6 = URL(string: "http://[::1]:8080/x")!
        list.append(
            Case(
                name: "IPv6 host", request: ClientRequest(url: ipv6),
                argv: ["-H", "User-Agent:", "-H", "Accept:", "--globoff", "http://[::1]:8080/x"].map(bytes)))
        return list
    }

    @Test(arguments: cases)
    func shellGivesCurlTheIntendedArguments(_ testCase: Case) throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let command = testCase.request.curlDescription
        #expect(!command.contains("\n"), "one line")
        // A stand-in `curl` (a shell function, which wins over PATH) that writes its arguments NUL-separated, and
        // its standard input. A function rather than a script file: a file just written can be busy (ETXTBSY) for
        // exec while a parallel test's fork still holds it open.
        let standIn = #"curl() { for a in "$@"; do printf '%s\0' "$a"; done > "$ARGV_OUT"; cat > "$STDIN_OUT"; }"#
        let status = try runBash(
            standIn + "\n" + command,
            environment: [
                "ARGV_OUT": folder + "/argv", "STDIN_OUT": folder + "/stdin",
            ])
        #expect(status == 0, "\(command)")
        let dumped = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/argv")))
        let argv = dumped.split(separator: 0, omittingEmptySubsequences: false).dropLast().map(Array.init)
        #expect(argv == testCase.argv, "\(command)")
        let stdin = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/stdin")))
        #expect(stdin == testCase.stdin, "\(command)")
    }

    @Test func streamBodyIsNotedNotRead() {
        let request = ClientRequest(
            url: URL(string: "http://h/a")!, method: "POST",
            body: .stream(length: nil) {
                Issue.record("the stream was read")
                return AsyncThrowingStream { $0.finish() }
            })
        #expect(request.curlDescription.hasSuffix(" # body: a stream (unknown length), not included"))
    }

    @Test func quotingIsSingleQuotesWithEscapedQuotes() {
        var headers = HTTPHeaders()
        headers.add(name: "X", value: "it's")
        let request = ClientRequest(url: URL(string: "http://h/a")!, headers: headers)
        #expect(request.curlDescription == #"curl -H 'X: it'\''s' -H 'User-Agent:' -H 'Accept:' 'http://h/a'"#)
    }
}
