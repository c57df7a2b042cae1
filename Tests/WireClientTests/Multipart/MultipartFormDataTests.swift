import Foundation
import Testing
import Wire
import WireClient
import WireTestSupport

/// The body a `MultipartFormData` produces, without sockets: AF's exact layout, lengths, quoting, the MIME table,
/// file checks, throttling, replay and length honesty.
@Suite(.sharedIO(minutes: 1))
struct MultipartFormDataTests {
    @Test func smallFormHasAFsExactLayout() async throws {
        let form = MultipartFormData(boundary: "B")
        form.appendPart(formData: Data("Ada".utf8), name: "name")
        form.appendPart(fileData: Data("hi\r\n".utf8), name: "f", fileName: "a.txt", mimeType: "text/plain")
        form.appendPart(headers: [("X-B", "2"), ("Content-Disposition", "form-data; name=\"h\"")], body: Data("z".utf8))
        let expected =
            "--B\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nAda"
            + "\r\n--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhi\r\n"
            + "\r\n--B\r\nX-B: 2\r\nContent-Disposition: form-data; name=\"h\"\r\n\r\nz"
            + "\r\n--B--\r\n"
        let bytes = try await collect(form.body)
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
        #expect(form.contentLength == Int64(expected.utf8.count))
        #expect(form.body.knownLength == Int64(expected.utf8.count))
        #expect(form.contentType == "multipart/form-data; boundary=B")
    }

    @Test func onePartEndsWithTheFinalBoundaryOnly() async throws {
        let form = MultipartFormData(boundary: "xyz")
        form.appendPart(formData: Data(), name: "empty")
        let text = String(decoding: try await collect(form.body), as: UTF8.self)
        #expect(text == "--xyz\r\nContent-Disposition: form-data; name=\"empty\"\r\n\r\n\r\n--xyz--\r\n")
    }

    @Test func defaultBoundaryIsRandomUpperCaseHex() {
        let first = MultipartFormData().boundary
        let second = MultipartFormData().boundary
        #expect(first != second)
        for boundary in [first, second] {
            #expect(boundary.hasPrefix("Boundary+") && boundary.count == 25)
            #expect(boundary.dropFirst(9).allSatisfy { "0123456789ABCDEF".contains($0) })
        }
    }

    @Test func namesAndFileNamesCannotBreakTheirHeader() async throws {
        let form = MultipartFormData(boundary: "B")
        form.appendPart(fileData: Data("x".utf8), name: "a\"b\r\nX-Injected: 1", fileName: "c\"d\ne.txt", mimeType: "text/plain")
        let text = String(decoding: try await collect(form.body), as: UTF8.self)
        #expect(
            text.contains("Content-Disposition: form-data; name=\"a%22b%0D%0AX-Injected: 1\"; filename=\"c%22d%0Ae.txt\"\r\n"))
        #expect(!text.contains("\r\nX-Injected"))
    }

    @Test func aPartHeaderWithCRLFOrNULIsRefusedNamingThePartAndNeverWritten() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("file".utf8).write(to: URL(fileURLWithPath: folder + "/x.txt"))
        /// A form of one good part, then `append`: the refused part is not added, and the form says why.
        func refused(_ expected: String, _ append: (MultipartFormData) -> Void) async throws {
            let form = MultipartFormData(boundary: "B")
            form.appendPart(formData: Data("1".utf8), name: "first")
            append(form)
            form.appendPart(formData: Data("3".utf8), name: "third")
            #expect(form.partCount == 2, "\(expected)")
            let error = try #require(form.refusedPartError, "\(expected)")
            #expect(error.code == .requestSerializationFailed)
            #expect(error.failureReason?.contains(expected) == true, "\(error.failureReason ?? "")")
            let text = String(decoding: try await collect(form.body), as: UTF8.self)
            #expect(!text.contains("Evil") && !text.utf8.contains(0))
            // Nothing of such a form is written to a file.
            let path = folder + "/spill"
            await #expect(throws: ClientError.self) { try await form.writeStreamContents(to: path) }
            #expect(!FileManager.default.fileExists(atPath: path))
        }
        try await refused("multipart part 2 (\"f\"): the value of its Content-Type field holds a carriage return (CR)") {
            $0.appendPart(fileData: Data("x".utf8), name: "f", fileName: "x.txt", mimeType: "text/plain\r\nEvil: b")
        }
        try await refused("multipart part 2 (\"s\"): the value of its Content-Type field holds a line feed (LF)") {
            $0.appendPart(
                stream: { AsyncThrowingStream { $0.finish() } }, name: "s", fileName: "s", length: 0,
                mimeType: "text/plain\nEvil: b")
        }
        try await refused("multipart part 2: the header name \"X\\r\\nEvil\" is not a field name") {
            $0.appendPart(headers: [("X\r\nEvil", "b")], body: Data())
        }
        try await refused("multipart part 2 (\"h\"): the value of its Content-Disposition field holds a line feed (LF)") {
            $0.appendPart(headers: [("Content-Disposition", "form-data; name=\"h\"\nEvil: b")], body: Data())
        }
        try await refused("multipart part 2: the header name \"\" is not a field name") {
            $0.appendPart(headers: [("", "b")], body: Data())
        }
        try await refused("multipart part 2: the value of its X-A field holds a NUL byte") {
            $0.appendPart(headers: [("X-A", "a\0")], body: Data())
        }

        // An append that can throw refuses at once, and the form stays usable.
        let form = MultipartFormData(boundary: "B")
        form.appendPart(formData: Data("1".utf8), name: "first")
        #expect(throws: ClientError.self) {
            try form.appendPart(fileAt: folder + "/x.txt", name: "p", fileName: "x.txt", mimeType: "text/plain\0Evil: b")
        }
        #expect(form.refusedPartError == nil)
        // A NUL in a name or file name is escaped like CR and LF.
        form.appendPart(fileData: Data("x".utf8), name: "n\0", fileName: "f\0.txt", mimeType: "text/plain")
        #expect(form.partCount == 2)
        let text = String(decoding: try await collect(form.body), as: UTF8.self)
        #expect(!text.contains("Evil") && !text.utf8.contains(0))
        #expect(text.contains("Content-Disposition: form-data; name=\"n%00\"; filename=\"f%00.txt\"\r\n"))

        // The serializer's multipart request fails with the refusal.
        #expect(throws: ClientError.self) {
            try HTTPRequestSerializer().multipartFormRequest(
                withMethod: "POST", urlString: "http://127.0.0.1/upload",
                parameters: nil
            ) { form in
                form.appendPart(fileData: Data("x".utf8), name: "f", fileName: "x.txt", mimeType: "a\r\nEvil: b")
            }
        }
    }

    @Test(arguments: [
        ("photo.PNG", "image/png"), ("a.jpeg", "image/jpeg"), ("x.tar.gz", "application/gzip"), ("d.json", "application/json"),
        ("clip.mov", "video/quicktime"), ("noext", "application/octet-stream"), (".bashrc", "application/octet-stream"),
        ("dir.d/file", "application/octet-stream"), ("s.plist", "application/x-plist"),
        ("t.weird-unknown-ext", "application/octet-stream"),
    ])
    func mimeTypeComesFromTheExtension(name: String, type: String) {
        #expect(MIMEType.forFileName(name) == type)
    }

    @Test func filePartTakesItsNameTypeAndSizeFromTheFile() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/report.csv"
        try Data("a,b\n1,2\n".utf8).write(to: URL(fileURLWithPath: path))
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(fileAt: "file://" + path, name: "doc")
        let text = String(decoding: try await collect(form.body), as: UTF8.self)
        #expect(
            text
                == "--B\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"report.csv\"\r\nContent-Type: text/csv\r\n\r\na,b\n1,2\n\r\n--B--\r\n"
        )
        #expect(form.contentLength == Int64(text.utf8.count))
    }

    @Test func unusableFilesAreRefusedWhenAppended() throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let form = MultipartFormData()
        #expect(throws: ClientError(.fileNotReachable)) { try form.appendPart(fileAt: folder + "/missing.bin", name: "f") }
        #expect(throws: ClientError(.fileNotReachable)) { try form.appendPart(fileAt: folder, name: "f") }
        #expect(throws: ClientError(.badURL)) { try form.appendPart(fileAt: "http://example.com/a.png", name: "f") }
        do {
            try form.appendPart(fileAt: "https://example.com/a.png", name: "f")
        } catch {
            #expect(error.failureReason?.contains("Expected URL to be a file URL") == true)
            #expect(error.urlErrorCode == -1000)
        }
        #expect(form.isEmpty)
    }

    @Test func everyPassStartsFromByteZero() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/blob.bin"
        let content = patternedBytes(200_000)
        try content.write(to: URL(fileURLWithPath: path))
        let form = MultipartFormData(boundary: "B")
        try form.appendPart(fileAt: path, name: "blob")
        form.appendPart(
            stream: { stream(of: content, chunkSize: 70_000) }, name: "s", fileName: "s.bin", length: Int64(content.count),
            mimeType: "application/octet-stream")
        let body = form.body
        let first = try await collect(body)
        let second = try await collect(body)
        #expect(first == second)
        #expect(Int64(first.count) == form.contentLength)
        // No chunk is larger than the reader's 256 KiB piece: a file is read a piece at a time, never whole.
        #expect(try await chunks(of: body).allSatisfy { $0.count <= 256 * 1024 })
    }

    @Test func aFileThatChangedSizeSinceItWasAppendedFailsThePass() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/grows.txt"
        try Data("12345".utf8).write(to: URL(fileURLWithPath: path))
        let form = MultipartFormData()
        try form.appendPart(fileAt: path, name: "f")
        try Data("1234567".utf8).write(to: URL(fileURLWithPath: path))
        #expect(await passError(form.body)?.code == .bodyLengthMismatch)
        try FileManager.default.removeItem(atPath: path)
        #expect(await passError(form.body)?.code == .fileNotReachable)
    }

    @Test(arguments: [5, 15])
    func aStreamPartOfAnotherLengthFailsThePass(actual: Int) async throws {
        let form = MultipartFormData(boundary: "B")
        let bytes = Data(repeating: 0x61, count: actual)
        form.appendPart(stream: { stream(of: bytes, chunkSize: 4) }, name: "s", fileName: "s", length: 10, mimeType: "text/plain")
        let error = await passError(form.body)
        #expect(error?.code == .bodyLengthMismatch)
        #expect(error?.urlErrorCode == -1)
    }

    @Test func throttlingHandsOutPacketsAndWaitsAfterEachOnTheClock() async throws {
        #expect(MultipartFormData.suggestedPacketSize3G == 16_384)
        #expect(MultipartFormData.suggestedDelay3G == .milliseconds(200))
        let clock = RecordingClock()
        let form = MultipartFormData(boundary: "B", clock: clock)
        form.appendPart(fileData: patternedBytes(1_000), name: "f", fileName: "f.bin", mimeType: "application/octet-stream")
        form.throttleBandwidth(packetSize: 100, delay: .milliseconds(200))
        let pieces = try await chunks(of: form.body)
        #expect(pieces.allSatisfy { !$0.isEmpty && $0.count <= 100 })
        #expect(Int64(pieces.reduce(0) { $0 + $1.count }) == form.contentLength)
        #expect(clock.sleeps.count == pieces.count)
        #expect(clock.sleeps.allSatisfy { $0 == .milliseconds(200) })

        // Unthrottled, a form of data and files is pieces, sent without a clock.
        let unthrottled = MultipartFormData(boundary: "B", clock: clock)
        unthrottled.appendPart(
            fileData: patternedBytes(1_000), name: "f", fileName: "f.bin", mimeType: "application/octet-stream")
        let before = clock.sleeps.count
        guard case .composite(let parts) = unthrottled.body else {
            Issue.record("an unthrottled form of data is not pieces")
            return
        }
        #expect(parts.count == 1)
        #expect(Int64(try await collect(unthrottled.body).count) == unthrottled.contentLength)
        #expect(clock.sleeps.count == before)
    }

    @Test func writeStreamContentsWritesTheBodyToAPrivateFile() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let form = MultipartFormData(boundary: "B")
        form.appendPart(formData: Data("1".utf8), name: "a")
        form.appendPart(fileData: patternedBytes(100_000), name: "b", fileName: "b.bin", mimeType: "application/octet-stream")
        let path = folder + "/body"
        try await form.writeStreamContents(to: path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == (try await collect(form.body)))
        let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        await #expect(throws: ClientError(.cannotWriteToFile)) {
            try await form.writeStreamContents(to: folder + "/no/such/dir/body")
        }
    }
}

/// `multipartFormRequest` and `writeMultipartBody(of:toFile:)`.
@Suite(.sharedIO(minutes: 1))
struct MultipartRequestSerializerTests {
    @Test func parametersBecomeUnescapedPartsBeforeTheBlocksParts() async throws {
        let serializer = HTTPRequestSerializer()
        let parameters: Parameters = ["b": "x y&z", "a": ["k": 1, "list": [true, .null]], "d": .data(Data([0, 255]))]
        let request = try serializer.multipartFormRequest(
            withMethod: "POST", urlString: "http://h/up", parameters: parameters,
            boundary: "B"
        ) { form in
            form.appendPart(formData: Data("last".utf8), name: "block")
        }
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=B")
        let body = try await collect(request.body)
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(body.count))
        let text = String(decoding: body, as: UTF8.self)
        let names = text.components(separatedBy: "name=\"").dropFirst().map { $0.prefix(while: { $0 != "\"" }) }
        #expect(names == ["a[k]", "a[list][]", "a[list][]", "b", "d", "block"])
        #expect(text.contains("name=\"b\"\r\n\r\nx y&z\r\n"))
        #expect(text.contains("name=\"a[list][]\"\r\n\r\n1\r\n"))
        #expect(text.contains("name=\"a[list][]\"\r\n\r\n\r\n"))
        #expect(body.range(of: Data("name=\"d\"\r\n\r\n".utf8) + Data([0, 255]) + Data("\r\n--B".utf8)) != nil)
    }

    @Test func anEmptyFormIsAPlainFormRequest() async throws {
        let request = try HTTPRequestSerializer().multipartFormRequest(
            withMethod: "POST", urlString: "http://h/up", parameters: nil
        ) { _ in }
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(try await collect(request.body).isEmpty)
    }

    @Test(arguments: ["GET", "head"])
    func getAndHeadCannotCarryAMultipartBody(method: String) {
        #expect(throws: ClientError(.requestSerializationFailed)) {
            try HTTPRequestSerializer().multipartFormRequest(
                withMethod: method, urlString: "http://h/", parameters: nil, constructingBody: nil)
        }
    }

    @Test func theBlocksErrorFailsTheRequest() {
        #expect(throws: ClientError(.fileNotReachable)) {
            try HTTPRequestSerializer().multipartFormRequest(withMethod: "POST", urlString: "http://h/", parameters: nil) {
                form in
                try form.appendPart(fileAt: "/no/such/file.png", name: "f")
            }
        }
        struct Refused: Error {}
        #expect(throws: ClientError(.requestSerializationFailed)) {
            try HTTPRequestSerializer().multipartFormRequest(withMethod: "PUT", urlString: "http://h/", parameters: nil) { _ in
                throw Refused()
            }
        }
    }

    @Test func writeMultipartBodyKeepsTheHeadersAndDropsTheBody() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let serializer = HTTPRequestSerializer()
        let request = try serializer.multipartFormRequest(
            withMethod: "POST", urlString: "http://h/up", parameters: ["a": "1"], boundary: "B",
            constructingBody: nil)
        let written = try await serializer.writeMultipartBody(of: request, toFile: folder + "/body")
        #expect(written.body == nil)
        #expect(written.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=B")
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/body"))
        #expect(written.value(forHTTPHeaderField: "Content-Length") == String(data.count))
        #expect(
            String(decoding: data, as: UTF8.self) == "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--B--\r\n")
        let plain = ClientRequest(url: URL(string: "http://h/")!, method: "POST", body: .data(Data("x".utf8)))
        await #expect(throws: ClientError(.requestSerializationFailed)) {
            try await serializer.writeMultipartBody(of: plain, toFile: folder + "/x")
        }
    }
}
