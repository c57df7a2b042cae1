import Foundation
import Testing
import Wire
import WireClient
import WireTestSupport

/// Multipart bodies on the wire: what Python's standard library parses out of them, against what curl -F sends;
/// length honesty on a live connection; replay on 307; the spill to a file; the empty form.
@Suite(.sharedIO)
struct MultipartUploadTests {
    /// A text field, a binary file, in-memory file data and a stream part, sent by Wire and by curl to one receiver.
    @Test func pythonParsesWhatWireSendsAsItParsesCurlsForm() async throws {
        let receiver = try await MultipartReceiver()
        defer { receiver.stop() }
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let photo = folder + "/photo.png"
        try patternedBytes(300_000, seed: 3).write(to: URL(fileURLWithPath: photo))
        let notes = patternedBytes(5_000, seed: 9)
        try notes.write(to: URL(fileURLWithPath: folder + "/notes.txt"))
        let streamed = patternedBytes(70_001, seed: 5)
        try streamed.write(to: URL(fileURLWithPath: folder + "/s.bin"))

        let manager = try HTTPSessionManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let result = try await manager.post(receiver.url().absoluteString, parameters: ["title": "café & co"]) { form in
            try form.appendPart(fileAt: photo, name: "photo")
            form.appendPart(fileData: notes, name: "notes", fileName: "notes.txt", mimeType: "text/plain")
            form.appendPart(
                stream: { stream(of: streamed, chunkSize: 8_192) }, name: "blob", fileName: "s.bin",
                length: Int64(streamed.count), mimeType: "application/x-custom")
        }
        let wire = try MultipartReceiver.report(result.data)
        #expect(wire.method == "POST")
        #expect(wire.received == wire.contentLength)
        #expect(wire.contentType?.hasPrefix("multipart/form-data; boundary=Boundary+") == true)
        #expect(wire.parts.map(\.name) == ["title", "photo", "notes", "blob"])
        #expect(wire.parts.map(\.filename) == [nil, "photo.png", "notes.txt", "s.bin"])
        #expect(wire.parts.map(\.type) == [nil, "image/png", "text/plain", "application/x-custom"])
        #expect(wire.parts[1].sha256 == (try sha256Hex(ofFile: photo)))
        #expect(wire.parts[3].sha256 == (try sha256Hex(ofFile: folder + "/s.bin")))

        let output = folder + "/curl.json"
        let command =
            "cd '\(folder)' && curl -sS -o '\(output)' -F 'title=café & co' -F 'photo=@photo.png;type=image/png' "
            + "-F 'notes=@notes.txt;type=text/plain' -F 'blob=@s.bin;type=application/x-custom' '\(receiver.url().absoluteString)'"
        #expect(try runBash(command) == 0)
        let curl = try MultipartReceiver.report(try Data(contentsOf: URL(fileURLWithPath: output)))
        #expect(curl.parts == wire.parts)
    }

    @Test func theCallbackVerbSendsTheSameForm() async throws {
        let receiver = try await MultipartReceiver()
        defer { receiver.stop() }
        let manager = try HTTPSessionManager(baseURL: receiver.url("/api/").absoluteString)
        manager.responseSerializer = HTTPResponseSerializer()
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Data?, ClientError>, Never>) in
            let task = manager.post(
                "upload", parameters: nil, boundary: "fixed-boundary",
                constructingBody: { form in
                    form.appendPart(formData: Data("v".utf8), name: "k")
                }, success: { _, value in continuation.resume(returning: .success(value as? Data)) },
                failure: { _, error in continuation.resume(returning: .failure(error)) })
            #expect(task?.kind == .upload)
        }
        let report = try MultipartReceiver.report(try outcome.get())
        #expect(report.contentType == "multipart/form-data; boundary=fixed-boundary")
        #expect(report.parts.map(\.name) == ["k"])
        let body = "--fixed-boundary\r\nContent-Disposition: form-data; name=\"k\"\r\n\r\nv\r\n--fixed-boundary--\r\n"
        #expect(report.received == body.utf8.count)
        #expect(report.contentLength == body.utf8.count)
    }

    @Test(arguments: [3_000, 5_000])
    func aStreamPartOfAnotherLengthFailsTheTaskAndTheServerNeverGetsAWholeRequest(actual: Int) async throws {
        try await LoopbackServer.with({ _, writer in try await writer.reply(200, "ok") }) { server in
            let manager = try HTTPSessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let bytes = patternedBytes(actual)
            do {
                _ = try await manager.post(server.url("/up").absoluteString) { form in
                    form.appendPart(formData: Data("first".utf8), name: "a")
                    form.appendPart(
                        stream: { stream(of: bytes, chunkSize: 1_024) }, name: "s", fileName: "s.bin", length: 4_000,
                        mimeType: "application/octet-stream")
                }
                Issue.record("the upload succeeded")
            } catch {
                let failure = error as? ClientError
                #expect(failure?.code == .bodyLengthMismatch)
                #expect(failure?.failingURL == server.url("/up"))
            }
            #expect(server.requests.isEmpty)
            #expect(await eventually(within: .seconds(10)) { server.openConnections == 0 })
        }
    }

    @Test func aFilePartThatChangedSinceItWasAppendedFailsTheTaskBeforeAnyRequest() async throws {
        try await LoopbackServer.with({ _, writer in try await writer.reply(200, "ok") }) { server in
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let path = folder + "/grows.bin"
            try patternedBytes(3_000).write(to: URL(fileURLWithPath: path))
            let form = MultipartFormData()
            try form.appendPart(fileAt: path, name: "f")
            try patternedBytes(5_000).write(to: URL(fileURLWithPath: path))
            var request = ClientRequest(url: server.url("/up"), method: "POST")
            form.attach(to: &request)
            let session = SessionManager()
            do {
                _ = try await session.data(for: request)
                Issue.record("the upload succeeded")
            } catch {
                let failure = error as? ClientError
                #expect(failure?.code == .bodyLengthMismatch)
                #expect(failure?.failingURL == server.url("/up"))
            }
            #expect(server.requests.isEmpty)
        }
    }

    @Test func a307ReplaysTheWholeBodyFromItsFileAndStream() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/part.bin"
        try patternedBytes(150_000).write(to: URL(fileURLWithPath: path))
        let passes = Counter()
        let form = MultipartFormData(boundary: "R")
        try form.appendPart(fileAt: path, name: "file")
        let streamed = patternedBytes(20_000, seed: 1)
        form.appendPart(
            stream: {
                passes.add()
                return stream(of: streamed)
            }, name: "s", fileName: "s.bin", length: 20_000, mimeType: "application/octet-stream")
        let expected = try await collect(form.body)
        passes.set(0)

        try await LoopbackServer.with({ request, writer in
            if request.target == "/first" {
                try await writer.reply(307, headers: ["Location": "/second"])
            } else {
                try await writer.reply(200, "done")
            }
        }) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            var request = ClientRequest(url: server.url("/first"), method: "POST")
            form.attach(to: &request)
            let result = try await manager.data(for: request)
            #expect(result.response?.statusCode == 200)
            #expect(server.requests.map(\.target) == ["/first", "/second"])
            #expect(server.requests.allSatisfy { Data($0.body) == expected })
            #expect(server.requests.allSatisfy { $0.headers.first(name: "Content-Length") == String(expected.count) })
            #expect(passes.current == 2)
        }
    }

    @Test func aRetrySendsTheWholeBodyAgain() async throws {
        let form = MultipartFormData(boundary: "T")
        let streamed = patternedBytes(90_000, seed: 4)
        form.appendPart(formData: Data("x".utf8), name: "a")
        form.appendPart(
            stream: { stream(of: streamed, chunkSize: 30_000) }, name: "s", fileName: "s.bin", length: 90_000,
            mimeType: "application/octet-stream")
        let expected = try await collect(form.body)
        let attempts = Counter()
        try await LoopbackServer.with({ _, writer in
            try await writer.reply(attempts.add() == 1 ? 503 : 200, "x")
        }) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            manager.interceptor = RetryInterceptor(
                policy: RetryPolicy(baseDelay: .milliseconds(1), jitter: .none, retryableMethods: nil))
            var request = ClientRequest(url: server.url("/up"), method: "POST")
            form.attach(to: &request)
            let result = try await manager.data(for: request)
            #expect(result.response?.statusCode == 200)
            #expect(server.requests.count == 2)
            #expect(server.requests.allSatisfy { Data($0.body) == expected })
        }
    }

    // Exclusive: it compares the shared spill folder before and after, where other multipart tests spill too.
    @Test(.exclusiveIO, arguments: [Int64(1), MultipartFormData.encodingMemoryThreshold])
    func theThresholdSendsThroughATemporaryFileOrFromMemory(threshold: Int64) async throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let spillFolder = (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/WireClient"
        @Sendable func spilled() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: spillFolder)) ?? []).filter { $0.hasSuffix(".multipart") }
        }
        let before = spilled()
        let form = MultipartFormData(boundary: "S")
        form.appendPart(formData: Data("1".utf8), name: "a")
        form.appendPart(fileData: patternedBytes(100_000), name: "b", fileName: "b.bin", mimeType: "application/octet-stream")
        let expected = try await collect(form.body)
        // What the spill folder holds while the server has the request: the spill file exists exactly when used.
        let seen = Recorder<[String]>()
        try await LoopbackServer.with({ _, writer in
            seen.record(spilled())
            try await writer.reply(200, "ok")
        }) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let result = try await manager.upload(
                for: ClientRequest(url: server.url("/up"), method: "POST"), multipartFormData: form,
                usingThreshold: threshold)
            #expect(result.response?.statusCode == 200)
            #expect(server.requests.first.map { Data($0.body) } == expected)
            #expect(server.requests.first?.headers.first(name: "Content-Type") == "multipart/form-data; boundary=S")
        }
        #expect(seen.all.first.map { Set($0).subtracting(before).count } == (threshold == 1 ? 1 : 0))
        // The spill file (in $TMPDIR/WireClient) is gone once the task completed.
        #expect(spilled() == before)
    }

    @Test func anEmptyFormIsSentAsAnEmptyFormPost() async throws {
        try await LoopbackServer.with({ _, writer in try await writer.reply(200, "ok") }) { server in
            let manager = try HTTPSessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            _ = try await manager.post(server.url("/up").absoluteString, constructingBody: { _ in })
            let request = try #require(server.requests.first)
            #expect(request.headers.first(name: "Content-Type") == "application/x-www-form-urlencoded")
            #expect(request.headers.first(name: "Content-Length") == "0")
            #expect(request.body.isEmpty)
        }
    }
}
