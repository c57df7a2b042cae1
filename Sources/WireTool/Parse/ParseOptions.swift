import Wire

/// A command-line mistake; exits 2.
struct ParseUsageError: Error {
    var message: String
}

/// The validated options of one `wire parse` run.
struct ParseOptions {
    var kind: HTTP1Parser.Kind
    var lenient: Bool
    var methods: [HTTPMethod]

    init(_ words: [String]) throws(ParseUsageError) {
        var kind: HTTP1Parser.Kind?
        var lenient = false
        var methods: [HTTPMethod] = []
        var index = 0
        func setKind(_ new: HTTP1Parser.Kind) throws(ParseUsageError) {
            guard kind == nil || kind == new else {
                throw ParseUsageError(message: "--request and --response exclude each other")
            }
            kind = new
        }
        while index < words.count {
            let word = words[index]
            index += 1
            switch word {
            case "--request":
                try setKind(.request)
            case "--response":
                try setKind(.response)
            case "--lenient":
                lenient = true
            case "--method":
                guard index < words.count else { throw ParseUsageError(message: "--method needs a value") }
                methods.append(try Self.method(words[index]))
                index += 1
            default:
                if word.hasPrefix("--method=") {
                    methods.append(try Self.method(String(word.dropFirst("--method=".count))))
                } else {
                    throw ParseUsageError(message: "unexpected argument '\(word)'")
                }
            }
        }
        guard let kind else { throw ParseUsageError(message: "say --request or --response") }
        if kind == .request && !methods.isEmpty {
            throw ParseUsageError(message: "--method applies to --response only")
        }
        self.kind = kind
        self.lenient = lenient
        self.methods = methods
    }

    private static func method(_ token: String) throws(ParseUsageError) -> HTTPMethod {
        // A method is a token (RFC 9110 §9.1): printable ASCII without delimiters.
        let delimiters = Set("\"(),/:;<=>?@[\\]{}".utf8)
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && !delimiters.contains($0) }) else {
            throw ParseUsageError(message: "invalid method '\(token)'")
        }
        return HTTPMethod(token)
    }
}
