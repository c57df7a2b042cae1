import ArgumentParser
import Glibc

/// The tool's entry point: parses the command line on the main thread, runs the command in a task on Swift's global
/// executor, and exits the process when it ends.
///
/// Two choices keep a fetch's resident set small (BENCHMARKS.md, "Peak RSS of the tool"):
/// - Not an `async` main: that one ends the main thread with `pthread_exit` once the first task is started, and the
///   forced unwind of the main thread's stack that it brings reads the executable's whole unwind table (about
///   0.7 MiB of the binary's pages, resident for the rest of the run). Here the main thread just waits. It blocks no
///   signal (Dispatch's worker threads, and the loops they start, block nearly all): Ctrl-C still ends a fetch, and
///   `wire serve`'s signal source still hears SIGINT and SIGTERM.
/// - `wire get` and `wire request` parse their own words, curl's way (`FetchOptions`): ArgumentParser would only hand
///   them over, after reflecting over every command's properties (about 0.6 MiB of code and metadata pages). They
///   go straight to the fetch unless a word is one ArgumentParser answers itself (help, version, completion).
@main
enum WireMain {
    static func main() {
        let arguments = CommandLine.arguments
        if let fetch = FetchCommandLine(arguments) {
            Task.detached { await run(fetch) }
        } else {
            let command: any ParsableCommand
            do {
                command = try WireCommand.parseAsRoot()
            } catch {
                WireCommand.exit(withError: error)
            }
            // The parsed command goes to the task whole (it is not used here again), so it need not be `Sendable`.
            Task.detached { await run(command) }
        }
        while true { pause() }
    }

    /// Runs one parsed command and exits with its status: 0, or what `exit(withError:)` makes of its error.
    private static func run(_ command: any ParsableCommand) async -> Never {
        var command = command
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            WireCommand.exit(withError: error)
        }
        exit(0)
    }

    /// Runs `wire get` or `wire request` as their `run()` would, and exits the same way.
    private static func run(_ fetch: FetchCommandLine) async -> Never {
        do {
            try await FetchHelp.run(fetch.words, command: fetch.command, requiresMethod: fetch.command == "request")
        } catch {
            WireCommand.exit(withError: error)
        }
        exit(0)
    }
}

/// A command line that is a fetch (`wire get …` or `wire request …`) with no word ArgumentParser would answer itself.
package struct FetchCommandLine: Sendable, Equatable {
    /// `get` or `request`.
    let command: String
    /// The words after the command, for `FetchOptions`.
    package let words: [String]

    /// The words ArgumentParser answers itself wherever they appear after a command (help, hidden help, completion
    /// scripts, its help dump), alone or as `word=value`; every other word of `GetCommand` is passed on unrecognized.
    static let parserWords: Set<String> = [
        "-h", "--help", "-help", "--help-hidden", "-help-hidden", "--generate-completion-script", "--experimental-dump-help",
    ]

    /// A fetch of `command` with `words`.
    package init(command: String, words: [String]) {
        self.command = command
        self.words = words
    }

    /// Nil unless `arguments` (the program name first) is a fetch with no word ArgumentParser answers itself.
    ///
    /// One difference, on purpose: ArgumentParser split a single-dash word into letters and took any with an `h`
    /// for help, so `-sh` printed the help and `-H'Accept: text/html'` did too instead of sending the field. Here
    /// such words are curl's, as `FetchOptions` reads them.
    package init?(_ arguments: [String]) {
        guard arguments.count >= 2, arguments[1] == "get" || arguments[1] == "request" else { return nil }
        let words = Array(arguments.dropFirst(2))
        let answeredByParser = words.contains { word in
            Self.parserWords.contains(word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word)
        }
        guard !answeredByParser else { return nil }
        command = arguments[1]
        self.words = words
    }
}
