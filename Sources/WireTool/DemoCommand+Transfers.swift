import FoundationEssentials
import Glibc
import Wire
import WireClient

/// The last part of `wire demo`: WireClient's file transfers against the embedded server, a multipart upload of a
/// 3 MiB file with a form field and a download task writing a 3 MiB body to a file, each checked byte for byte.
/// These are the paths a user of a release build meets first, so the release tool's run of the demo (CI runs it)
/// is also the check that the optimiser kept them intact.
extension DemoCommand {
    /// The size of both transfers: 3 MiB and an odd tail, so no buffer boundary lines up with the end.
    static let transferSize = 3 << 20 | 7

    /// The bytes of `/bytes/N` and of the uploaded file: a pattern in which a lost, repeated or moved byte shows.
    static func patterned(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    }

    /// Runs the transfer part against `base`; returns the number of unexpected outcomes.
    static func runTransfers(base: String) async throws -> Int {
        print("")
        print("WireClient: a multipart upload from a file and a download to a file, 3 MiB each way")
        // Under $TMPDIR when it names a folder, as the session's own temporary files are.
        let temporary = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(temporary)/wire-demo-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            print("  cannot make a temporary folder (errno \(errno)): transfers skipped")
            return 1
        }
        let folder = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bytes = patterned(transferSize)
        let file = folder + "/upload.bin"
        try Data(bytes).write(to: URL(filePath: file))

        let manager = try HTTPSessionManager(baseURL: base + "/")
        manager.responseSerializer = HTTPResponseSerializer()
        var failures = 0
        do {
            let upload = try await manager.post(
                "upload",
                constructingBody: { form in
                    try form.appendPart(fileAt: file, name: "file")
                    form.appendPart(formData: Data("demo".utf8), name: "field")
                })
            let verdict = upload.response?.headers.first(name: "X-Upload") ?? "no answer"
            print("  POST upload (multipart: a 3 MiB file and a field) → \(upload.response?.statusCode ?? 0), server: \(verdict)")
            if verdict != "file and field intact" { failures += 1 }
        } catch {
            failures += 1
            print("  POST upload → error: \(error)")
        }

        let destination = folder + "/download.bin"
        do {
            let request = ClientRequest(url: URL(string: "\(base)/bytes/\(transferSize)")!)
            let download = try await manager.session.download(for: request, destination: { _, _ in destination })
            let received = FileManager.default.contents(atPath: destination).map { [UInt8]($0) }
            let intact = received == bytes
            print(
                "  GET bytes/\(transferSize) to a file → \(download.response?.statusCode ?? 0), "
                    + "\(received?.count ?? 0) bytes written, \(intact ? "intact" : "NOT the bytes sent")")
            if !intact { failures += 1 }
        } catch {
            failures += 1
            print("  GET bytes → error: \(error)")
        }
        manager.session.invalidateSession(cancelingTasks: true)
        return failures
    }

    /// `/upload` (a multipart POST: answers in `X-Upload` whether the file part and the field arrived intact) and
    /// `/bytes/N` (N patterned bytes).
    static func handleTransferRoutes(_ request: HTTPServerRequest, _ response: HTTPResponseWriter) async throws -> Bool {
        let target = request.head.target
        if target == "/upload" {
            let body = try await request.body.collect(upTo: 16 << 20)
            let received = body.withUnsafeReadableBytes { [UInt8]($0) }
            // The file is the first part: its bytes start where the part's header block ends; the field comes after.
            let file = patterned(transferSize)
            let start = received.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound ?? received.count
            let fileIntact = received.count - start >= file.count && received[start..<start + file.count].elementsEqual(file)
            let fieldIntact = received[start...].firstRange(of: Array("\r\n\r\ndemo\r\n".utf8)) != nil
            let verdict =
                fileIntact && fieldIntact ? "file and field intact" : "parts missing or damaged (\(received.count) bytes)"
            try await response.respond(HTTPResponseHead(status: .ok, headers: ["X-Upload": verdict]))
            return true
        }
        if target.hasPrefix("/bytes/"), let count = Int(target.dropFirst("/bytes/".count)), (0...(16 << 20)).contains(count) {
            try await response.respond(
                HTTPResponseHead(status: .ok, headers: ["Content-Type": "application/octet-stream"]),
                body: ByteBuffer(bytes: patterned(count)))
            return true
        }
        return false
    }
}
