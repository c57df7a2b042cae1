import ArgumentParser

/// `wire`: Wire's command-line tool (started by `WireMain`).
struct WireCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wire",
        abstract: "A pure-Swift HTTP/1.1 stack for Linux: fetch, serve, parse and benchmark HTTP.",
        version: String(WireVersion.text.dropLast()),
        // Each subcommand lives in its own file; add it here when it lands.
        subcommands: [
            ParseCommand.self, ServeCommand.self, GetCommand.self, RequestCommand.self, DemoCommand.self, BenchGroupCommand.self,
            ReachabilityCommand.self, RecordCommand.self, ReplayCommand.self,
        ]
    )
}
