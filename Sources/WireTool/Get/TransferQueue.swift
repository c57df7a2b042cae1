/// The transfers of one run in curl's order: each URL of the command line expanded as a glob (unless `-g`), each URL
/// with the `-o`/`-O` given for it (the first output goes with the first URL, and so on), `#N` in an `-o` name filled
/// with the values of that expansion.
///
/// Globs are read when their URL is reached, as curl reads them: a malformed one after good ones ends the run after
/// those have been fetched. `checkAll` reads them all first, as curl's `-Z` does before starting anything.
struct TransferQueue {
    /// One transfer to make.
    struct Transfer: Sendable {
        /// The URL, expanded.
        var url: String
        /// Where its body goes (nil: standard output).
        var output: FetchOptions.Output?
        /// The place of the URL it came from on the command line (curl's `urlnum`: every expansion of a glob has its
        /// URL's).
        var index: Int
    }

    private let options: FetchOptions
    private var urlIndex = 0
    /// The expansions left of the URL being read, with its output.
    private var current: (expansions: AnyIterator<URLGlob.Expansion>, output: FetchOptions.Output?, index: Int)?

    init(_ options: FetchOptions) {
        self.options = options
    }

    /// Parses every URL's glob without making a transfer.
    ///
    /// - Throws: `TransferFailure` 3 for the first malformed glob, with curl's message.
    func checkAll() throws(TransferFailure) {
        guard !options.globOff else { return }
        for url in options.urls { _ = try Self.glob(url) }
    }

    /// The next transfer; nil when there is none left.
    ///
    /// - Throws: `TransferFailure` 3 when the next URL's glob is malformed.
    mutating func next() throws(TransferFailure) -> Transfer? {
        while true {
            if let current, let expansion = current.expansions.next() {
                var output = current.output
                if case .file(let name) = output { output = .file(URLGlob.outputName(name, values: expansion.values)) }
                return Transfer(url: expansion.url, output: output, index: current.index)
            }
            current = nil
            guard urlIndex < options.urls.count else { return nil }
            let index = urlIndex
            let url = options.urls[index]
            urlIndex += 1
            let output: FetchOptions.Output? =
                index < options.outputs.count ? options.outputs[index] : options.output.remoteNameAll ? .remoteName : nil
            if options.globOff {
                // Taken as written: no expansion, and `#` in the -o name is text.
                current = (AnyIterator(CollectionOfOne(URLGlob.Expansion(url: url, values: [])).makeIterator()), output, index)
            } else {
                current = (AnyIterator(try Self.glob(url).expansions.makeIterator()), output, index)
            }
        }
    }

    private static func glob(_ url: String) throws(TransferFailure) -> URLGlob {
        do { return try URLGlob(url) } catch {
            throw TransferFailure(status: ExitStatus.malformedURL, message: error.message)
        }
    }
}
