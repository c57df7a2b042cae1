import Testing
import WireTool

/// `wire get` and `wire request` skip ArgumentParser (WireMain) unless a word is one ArgumentParser answers itself:
/// the words that take the fast path, and that the help still comes from ArgumentParser.
struct FetchCommandLineTests {
    @Test func fetchesTakeTheFastPathWithTheirWords() {
        #expect(
            FetchCommandLine(["wire", "get", "-sL", "http://h/"])
                == FetchCommandLine(command: "get", words: ["-sL", "http://h/"]))
        #expect(FetchCommandLine(["wire", "request", "-X", "PUT", "http://h/"])?.words == ["-X", "PUT", "http://h/"])
        #expect(FetchCommandLine(["wire", "get"])?.words == [], "no URL is the fetch's own usage error (2), not the parser's")
        #expect(
            FetchCommandLine(["wire", "get", "-H", "Accept: text/html", "http://h/"]) != nil, "an h inside a word is not help")
        #expect(FetchCommandLine(["wire", "get", "--version"]) != nil, "the tool has no version for ArgumentParser to answer")
    }

    @Test(arguments: [
        ["wire", "get", "--help"], ["wire", "get", "-h"], ["wire", "request", "-help"],
        ["wire", "get", "http://h/", "--help-hidden"],
        ["wire", "get", "--help=x"], ["wire", "get", "--generate-completion-script=bash"],
        ["wire", "get", "--experimental-dump-help"],
        ["wire", "serve", "--hello"], ["wire"], ["wire", "help", "get"],
    ])
    func everythingElseGoesThroughArgumentParser(_ arguments: [String]) {
        #expect(FetchCommandLine(arguments) == nil)
    }
}

extension IOSuite {
    @Suite struct FetchCommandLineRunTests {
        /// The help of a fetch command is ArgumentParser's, as before the fast path.
        @Test(arguments: [["get", "--help"], ["get", "-h"], ["request", "--help"]])
        func helpIsArgumentParsers(_ arguments: [String]) async throws {
            let run = try await WireToolRunner.run(arguments)
            #expect(run.status == 0)
            #expect(run.text.hasPrefix("OVERVIEW: "), "\(run.text.prefix(200))")
        }
    }
}
