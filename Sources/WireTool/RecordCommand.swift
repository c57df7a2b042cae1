import ArgumentParser
import Wire

/// `wire record`: what is done with recordings (`wire get --record`, `wire serve --record`) besides replaying them.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Work with recordings made by wire get --record and wire serve --record.",
        discussion: """
            A recording is JSON lines (format wire-record, version 1; README, "Record and replay"): a header, then \
            every write and read with its time, direction and connection, then each request's metrics.
            """,
        subcommands: [ExportHARCommand.self]
    )
}

/// `wire record export-har FILE…`: the recordings as one HTTP Archive (HAR 1.2).
struct ExportHARCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export-har",
        abstract: "Write recordings as one HAR 1.2 archive (entries with heads, bodies and timings).",
        discussion: """
            Each request found in the bytes is an entry, paired with the final response on its connection. Timings \
            in milliseconds (-1 where they do not apply): blocked, dns, connect (ssl included), ssl, send, wait, \
            receive from a client recording's metrics; a server recording has send, wait and receive from the times \
            of the bytes. Bodies are UTF-8 text, or base64 with "encoding": "base64".
            """
    )

    @Argument(help: "Recordings (one file each; several are merged in the order given).")
    var files: [String]

    @Option(name: [.short, .long], help: "Write the archive to this file (mode 0600) instead of standard output.")
    var output: String?

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one recording") }
    }

    func run() async throws {
        var export = HARExport()
        for file in files {
            do { export.add(try Recording.read(file)) } catch { throw ValidationError("\(file): \(error)") }
        }
        let text = export.document.text + "\n"
        if let output {
            do { try LocalFiles.replaceContents(atPath: output, with: Array(text.utf8)) } catch {
                throw ValidationError("cannot write \(output): \(error)")
            }
        } else {
            StandardStreams.output(text)
        }
    }
}
