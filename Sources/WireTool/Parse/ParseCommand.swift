import ArgumentParser
import Glibc
import Wire

/// `wire parse`: reads raw HTTP/1.1 bytes from standard input and prints every message as one JSON line.
///
/// The whole input is read first (binary-safe) and parsed in place with one `HTTP1Parser`, so body ranges index the
/// input directly and nothing is copied more than once: the cost is linear in the input size.
///
/// Output, one line per message, keys in this order:
/// - requests: `method`, `target`, `version`, `headers`, `body_b64`, `keep_alive`;
/// - responses (interim 1xx included, each on its own line): `version`, `status`, `reason`, `headers`, `body_b64`,
///   `keep_alive`.
///
/// Optional keys follow only when they apply: `trailers` (a chunked body's trailer fields), `repairs` (what a
/// `--lenient` parser repaired, as `{"kind", "offset"}` objects), `upgraded` (the connection switched protocols
/// after this message; the rest of the input is not HTTP/1.1 and is not parsed).
///
/// Text encoding, lossless: every string is the message's bytes, each byte `0xNN` as the code point U+00NN
/// (`\u00nn` from 0x7F up), the mapping of `JSONString`; a reader gets the exact bytes back, UTF-8 or not.
///
/// `keep_alive` is what the head says (RFC 9112 §9.3), and `false` for a response whose body was delimited by the
/// end of the input, which closes the connection whatever the head says.
///
/// Without `--lenient`, requests are read with the server's strict defaults and responses with the client's
/// (`HTTP1ParserConfiguration.userAgent`): obs-fold in a response is then unfolded to one SP and listed in `repairs`,
/// while obs-fold in a request is an error.
///
/// On a protocol error the tool prints `{"error": "<kind>", "offset": N}` after the complete messages and exits 1.
struct ParseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract: "Parse HTTP/1.1 messages from standard input and print each as a JSON line.",
        usage: "wire parse (--request | --response [--method <method>]...) [--lenient] < input",
        discussion: """
            Options:
              --request            The input holds requests.
              --response           The input holds responses.
              --method <method>    The method of the request the next response answers (repeatable, in order; \
            the last one given answers every later response too, so --method HEAD reads a pipeline of HEAD \
            answers; default GET). HEAD and CONNECT change how a response is framed.
              --lenient            Use the lenient parser configuration; repairs are listed in "repairs". \
            Without it, requests are parsed strictly and responses as HTTPClient reads them (obs-fold unfolded \
            to one space and listed in "repairs", RFC 9112 §5.2).

            Exit status: 0 when all input parsed, 1 on a protocol error (after printing \
            {"error": "<kind>", "offset": N}), 2 on a usage error.
            """
    )

    /// Every command-line word, parsed by `ParseOptions.init`, so that any usage error exits with status 2 rather than
    /// the argument parser's 64.
    @Argument(parsing: .allUnrecognized, help: .hidden)
    var words: [String] = []

    func run() throws {
        let options: ParseOptions
        switch Result(catching: { () throws(ParseUsageError) in try ParseOptions(words) }) {
        case .success(let parsed):
            options = parsed
        case .failure(let error):
            let usage = Self.configuration.usage ?? ""
            StandardStreams.error("wire parse: \(error.message)\nusage: \(usage)\n")
            throw ExitCode(2)
        }
        let input: [UInt8]
        do {
            input = try LocalFiles.readToEnd(STDIN_FILENO)
        } catch {
            StandardStreams.error("wire parse: cannot read standard input: \(error)\n")
            throw ExitCode(2)
        }
        var output = JSONLineWriter()
        let succeeded = input.withUnsafeBufferPointer { bytes in
            var session = ParseSession(options: options, input: bytes)
            return session.run(into: &output)
        }
        output.flush()
        if !succeeded { throw ExitCode(1) }
    }
}
