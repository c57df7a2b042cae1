import Foundation
import Testing
import Wire
import WireClient
import WireTestSupport

/// Resumable downloads: `cancel(producingResumeData:)` and `downloadTask(withResumeData:)` against a real
/// nginx (ranges, `ETag`, `If-Range`) and against servers that ignore or botch ranges.
@Suite(.sharedIO(minutes: 1))
struct SessionResumeTests {
    /// What one resumed download reported.
    struct Finished: Sendable {
        var error: ClientError?
        var value: String?
        /// `downloadTaskDidResume`'s `(offset, total)`, in order.
        var resumes: [[Int64]]
        /// The first progress snapshot.
        var firstProgress: TaskProgress?
    }

    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("wireclient-resume-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func randomBytes(_ count: Int, seed: UInt64) -> Data {
        var random = SplitMix64(seed: seed)
        var bytes = [UInt8](repeating: 0, count: count)
        for index in stride(from: 0, to: count, by: 8) {
            withUnsafeBytes(of: random.next()) { word in
                for offset in 0..<min(8, count - index) { bytes[index + offset] = word[offset] }
            }
        }
        return Data(bytes)
    }

    /// Resumes `make`'s task and cancels it with resume data from the write hook once `cut` bytes (the offset
    /// included) are on disk: the hook holds the transfer, so exactly the bytes written so far stay in the file.
    /// - Returns: The resume data, the bytes written when it was cancelled, and the task's error.
    static func cancel(
        after cut: Int64, on manager: SessionManager,
        _ make: (@escaping TaskCompletionHandler) -> SessionTask
    ) async -> (data: Data?, written: Int64, error: ClientError?) {
        let written = Counter()
        let data = Recorder<Data?>()
        manager.downloadTaskDidWriteData = { task, _, total, _ in
            guard total >= cut, written.current == 0 else { return }
            written.set(Int(total))
            task.cancel(producingResumeData: { data.record($0) })
        }
        let error = await withCheckedContinuation { (continuation: CheckedContinuation<ClientError?, Never>) in
            make { _, _, error in continuation.resume(returning: error) }.resume()
        }
        manager.downloadTaskDidWriteData = nil
        // The resume-data handler runs before the completion handler.
        return (data.all.first ?? nil, Int64(written.current), error)
    }

    /// Downloads `url` on a new manager, cancels it for resume data after 128 KiB, and resumes it into
    /// `folder/file`.
    static func cutAndResume(_ url: URL, into folder: String) async throws
        -> (cut: (data: Data?, written: Int64, error: ClientError?), finished: Finished, destination: String)
    {
        let manager = SessionManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let cut = await cancel(after: 128 << 10, on: manager) {
            manager.downloadTask(with: ClientRequest(url: url), completionHandler: $0)
        }
        let resumeData = try #require(cut.data)
        let destination = folder + "/file"
        return (cut, await finish(resumeData, on: manager, to: destination), destination)
    }

    /// Resumes from `resumeData` into `destination` and waits for the completion.
    static func finish(_ resumeData: Data, on manager: SessionManager, to destination: String) async -> Finished {
        let resumes = Recorder<[Int64]>()
        manager.downloadTaskDidResume = { _, offset, total in resumes.record([offset, total]) }
        let progress = Recorder<TaskProgress>()
        let (error, value) = await withCheckedContinuation {
            (continuation: CheckedContinuation<(ClientError?, String?), Never>) in
            manager.downloadTask(
                withResumeData: resumeData, progress: { progress.record($0) },
                destination: { _, _ in destination }
            ) { _, value, error in
                continuation.resume(returning: (error, value as? String))
            }.resume()
        }
        return Finished(error: error, value: value, resumes: resumes.all, firstProgress: progress.all.first)
    }

    /// The temporary file the resume data names (the test peeks into the opaque record).
    static func temporaryFile(in resumeData: Data) throws -> String {
        let object = try #require(try JSONSerialization.jsonObject(with: resumeData) as? [String: Any])
        return try #require(object["temporaryFile"] as? String)
    }

    @Test(.enabled(if: TestNginx.isInstalled, "nginx is not installed"))
    func aDownloadCutTwiceAtRandomOffsetsResumesToTheExactFileAgainstNginx() async throws {
        let size = 4 << 20
        let seed = UInt64.random(in: 1...UInt64.max)
        let original = Self.randomBytes(size, seed: seed)
        let nginx = try TestNginx(files: ["big.bin": original])
        defer { nginx.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let manager = SessionManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let url = URL(string: nginx.baseURL + "/big.bin")!
        var random = SplitMix64(seed: seed)
        let firstCut = Int64.random(in: 256 << 10...1 << 20, using: &random)
        let secondCut = Int64.random(in: 2 << 20...3 << 20, using: &random)

        let first = await Self.cancel(after: firstCut, on: manager) {
            manager.downloadTask(with: ClientRequest(url: url), completionHandler: $0)
        }
        #expect(first.error?.code == .cancelled)
        let firstData = try #require(first.data, "seed \(seed)")
        let kept = try Self.temporaryFile(in: firstData)
        #expect(try FileManager.default.attributesOfItem(atPath: kept)[.size] as? Int == Int(first.written))
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == original.prefix(Int(first.written)))

        // The resumed task is cut again: its resume data continues the same file.
        let second = await Self.cancel(after: secondCut, on: manager) { completion in
            manager.downloadTask(withResumeData: firstData, completionHandler: completion)
        }
        #expect(second.error?.code == .cancelled)
        let secondData = try #require(second.data, "seed \(seed)")
        #expect(try Self.temporaryFile(in: secondData) == kept)

        let destination = folder + "/big.bin"
        let finished = await Self.finish(secondData, on: manager, to: destination)
        #expect(finished.error == nil, "seed \(seed)")
        #expect(finished.value == destination)
        #expect(finished.resumes == [[second.written, Int64(size)]], "seed \(seed)")
        #expect(finished.firstProgress == TaskProgress(completedUnitCount: second.written, totalUnitCount: Int64(size)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == original, "seed \(seed)")
        #expect(!FileManager.default.fileExists(atPath: kept))
        let log = try String(contentsOfFile: nginx.prefix + "/logs/access.log", encoding: .utf8)
        #expect(log.split(separator: "\n").filter { $0.contains("\" 206 ") }.count == 2)
    }

    @Test(.enabled(if: TestNginx.isInstalled, "nginx is not installed"))
    func aChangedETagRestartsWithTheNewContent() async throws {
        let old = Self.randomBytes(3 << 20, seed: 1)
        let new = Self.randomBytes((3 << 20) + 4097, seed: 2)  // another size: another ETag even within one second
        let nginx = try TestNginx(files: ["file.bin": old])
        defer { nginx.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let manager = SessionManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let url = URL(string: nginx.baseURL + "/file.bin")!
        let cut = await Self.cancel(after: 1 << 20, on: manager) {
            manager.downloadTask(with: ClientRequest(url: url), completionHandler: $0)
        }
        let resumeData = try #require(cut.data)
        try new.write(to: URL(fileURLWithPath: nginx.root + "/file.bin"))

        let destination = folder + "/file.bin"
        let finished = await Self.finish(resumeData, on: manager, to: destination)
        #expect(finished.error == nil)
        #expect(finished.resumes == [[0, Int64(new.count)]])
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == new)
    }

    /// A server that ignores `Range` (as python's http.server does) answers 200: the file starts over.
    @Test func aServerThatIgnoresRangeRestartsTheFileCleanly() async throws {
        let body = Self.randomBytes(2 << 20, seed: 3)
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await LoopbackServer.with({ _, writer in
            try await writer.respond(
                HTTPResponseHead(status: .ok, headers: ["ETag": "\"v1\""]), body: ByteBuffer(bytes: Array(body)))
        }) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            var request = ClientRequest(url: server.url("/file"))
            request.setValue("kept", forHTTPHeaderField: "X-Caller")
            let cut = await Self.cancel(after: 256 << 10, on: manager) {
                manager.downloadTask(with: request, completionHandler: $0)
            }
            let resumeData = try #require(cut.data)
            let destination = folder + "/file"
            let finished = await Self.finish(resumeData, on: manager, to: destination)
            #expect(finished.error == nil)
            #expect(finished.resumes == [[0, Int64(body.count)]])
            #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == body)
            let resumed = try #require(server.requests.last?.headers)
            #expect(server.requests.count == 2)
            #expect(resumed.first(name: "Range") == "bytes=\(cut.written)-")
            #expect(resumed.first(name: "If-Range") == "\"v1\"")
            #expect(resumed.first(name: "Accept-Encoding") == "identity")
            #expect(resumed.first(name: "X-Caller") == "kept")
        }
    }

    /// A 416, or a 206 for another range than asked, is not appended: the request goes again without `Range`.
    @Test(arguments: ["416", "206 elsewhere", "206 short"])
    func anAnswerThatCannotContinueTheFileSendsTheRequestAgainWithoutRange(answer: String) async throws {
        let body = Self.randomBytes(1 << 20, seed: 4)
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await LoopbackServer.with({ request, writer in
            let headers: HTTPHeaders = ["ETag": "\"v1\""]
            guard let range = request.headers.first(name: "Range") else {
                try await writer.respond(HTTPResponseHead(status: .ok, headers: headers), body: ByteBuffer(bytes: Array(body)))
                return
            }
            let offset = Int(range.dropFirst("bytes=".count).dropLast())!
            switch answer {
            case "416":
                try await writer.reply(416, headers: ["Content-Range": "bytes */\(body.count)"])
            case "206 elsewhere":
                // Bytes from 0, labelled as such: appended, they would duplicate the start.
                try await writer.respond(
                    HTTPResponseHead(
                        status: HTTPStatus(code: 206),
                        headers: [
                            "Content-Range": "bytes 0-\(body.count - offset - 1)/\(body.count)", "ETag": "\"v1\"",
                        ]),
                    body: ByteBuffer(bytes: Array(body.prefix(body.count - offset))))
            default:
                // The right start but not to the end: the file would be short.
                try await writer.respond(
                    HTTPResponseHead(
                        status: HTTPStatus(code: 206),
                        headers: [
                            "Content-Range": "bytes \(offset)-\(offset + 9)/\(body.count)", "ETag": "\"v1\"",
                        ]),
                    body: ByteBuffer(bytes: Array(body[offset..<offset + 10])))
            }
        }) { server in
            let (cut, finished, destination) = try await Self.cutAndResume(server.url("/file"), into: folder)
            #expect(finished.error == nil)
            #expect(finished.resumes == [[0, Int64(body.count)]])
            #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == body)
            let ranges = server.requests.map { $0.headers.first(name: "Range") }
            #expect(ranges == [nil, "bytes=\(cut.written)-", nil])
        }
    }

    /// A 206 whose range runs to the largest offset a field can name, with an unknown complete length, appends
    /// without overflowing: the total is reported unknown (−1).
    @Test func aRangeToTheLargestOffsetWithAnUnknownLengthAppendsWithAnUnknownTotal() async throws {
        let body = Self.randomBytes(1 << 20, seed: 5)
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await LoopbackServer.with({ request, writer in
            guard let range = request.headers.first(name: "Range") else {
                try await writer.respond(
                    HTTPResponseHead(status: .ok, headers: ["ETag": "\"v1\""]), body: ByteBuffer(bytes: Array(body)))
                return
            }
            let offset = Int(range.dropFirst("bytes=".count).dropLast())!
            try await writer.respond(
                HTTPResponseHead(
                    status: HTTPStatus(code: 206),
                    headers: [
                        "Content-Range": "bytes \(offset)-9223372036854775807/*", "ETag": "\"v1\"",
                    ]),
                body: ByteBuffer(bytes: Array(body[offset...])))
        }) { server in
            let (cut, finished, destination) = try await Self.cutAndResume(server.url("/file"), into: folder)
            #expect(finished.error == nil)
            #expect(finished.resumes == [[cut.written, -1]])
            #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == body)
        }
    }

    /// Resume data that cannot be used fails the task with `.cannotDecodeRawData` before any request.
    @Test func unusableResumeDataFailsWithoutNetwork() async throws {
        let body = Self.randomBytes(1 << 20, seed: 5)
        try await LoopbackServer.with({ _, writer in
            try await writer.respond(
                HTTPResponseHead(status: .ok, headers: ["Last-Modified": "Tue, 24 Nov 2026 10:00:00 GMT"]),
                body: ByteBuffer(bytes: Array(body)))
        }) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let cut = await Self.cancel(after: 128 << 10, on: manager) {
                manager.downloadTask(with: ClientRequest(url: server.url("/file")), completionHandler: $0)
            }
            let resumeData = try #require(cut.data)
            var record = try #require(try JSONSerialization.jsonObject(with: resumeData) as? [String: Any])
            #expect(record["validator"] as? String == "Tue, 24 Nov 2026 10:00:00 GMT")
            let kept = try #require(record["temporaryFile"] as? String)
            record["version"] = 2
            let otherVersion = try JSONSerialization.data(withJSONObject: record)
            record["version"] = 1
            record["temporaryFile"] = "/etc/passwd"
            let foreignFile = try JSONSerialization.data(withJSONObject: record)
            record["temporaryFile"] = kept
            record["bytesOnDisk"] = cut.written + 1
            let wrongSize = try JSONSerialization.data(withJSONObject: record)
            var cases: [(String, Data)] = [
                ("garbage", Data("not resume data".utf8)), ("empty", Data()),
                ("another version", otherVersion), ("a foreign file", foreignFile),
                ("a shorter file", wrongSize),
            ]
            for (name, data) in cases {
                let error = await Self.finish(data, on: manager, to: "/nonexistent/never").error
                #expect(error?.code == .cannotDecodeRawData, "\(name)")
                #expect(error?.urlErrorCode == -1015, "\(name)")
            }
            #expect(FileManager.default.fileExists(atPath: kept))
            try FileManager.default.removeItem(atPath: kept)
            cases = [("a missing file", resumeData)]
            for (name, data) in cases {
                #expect(
                    await Self.finish(data, on: manager, to: "/nonexistent/never").error?.code == .cannotDecodeRawData, "\(name)")
            }
            #expect(server.requests.count == 1)
        }
    }

    /// No resume data (nil) without a validator, for a data task, or once the task completed; the file is deleted.
    @Test func resumeDataIsNilWhenTheDownloadCannotBeResumed() async throws {
        let body = Self.randomBytes(1 << 20, seed: 6)
        try await LoopbackServer.with({ request, writer in
            let headers: HTTPHeaders = request.target == "/weak" ? ["ETag": "W/\"weak\""] : [:]
            try await writer.respond(HTTPResponseHead(status: .ok, headers: headers), body: ByteBuffer(bytes: Array(body)))
        }) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let paths = Recorder<String>()
            manager.downloadTaskDidFinishDownloading = { _, path in
                paths.record(path); return nil
            }
            for path in ["/plain", "/weak"] {
                let cut = await Self.cancel(after: 128 << 10, on: manager) {
                    manager.downloadTask(with: ClientRequest(url: server.url(path)), completionHandler: $0)
                }
                #expect(cut.error?.code == .cancelled)
                #expect(cut.data == nil, "\(path)")
            }
            let dataTask = manager.dataTask(with: ClientRequest(url: server.url("/plain")))
            #expect(await dataTask.cancelProducingResumeData() == nil)
            let done = await withCheckedContinuation { (continuation: CheckedContinuation<SessionTask, Never>) in
                let task = Recorder<SessionTask>()
                task.record(
                    manager.downloadTask(with: ClientRequest(url: server.url("/plain"))) { _, _, _ in
                        continuation.resume(returning: task.all[0])
                    })
                task.all[0].resume()
            }
            #expect(await done.cancelProducingResumeData() == nil)
            // The finished download's file was deleted after its completion handler.
            let finished = try #require(paths.all.first)
            #expect(await eventually(within: .seconds(5)) { !FileManager.default.fileExists(atPath: finished) })
        }
    }
}
