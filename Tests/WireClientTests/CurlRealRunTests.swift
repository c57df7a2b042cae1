import Foundation
import Testing
import WireTestSupport
import Wire
import WireClient

/// Issue 13 item 7 with the real curl: the command from `curlDescription` delivers to a loopback server the same
/// request line, header fields and body as Wire's client sends for the same `ClientRequest`.
@Suite(.sharedIO(minutes: 1)) struct CurlRealRunTests {
    /// A raw-socket recorder on 127.0.0.1 port 0: writes each request's exact bytes (head and Content-Length body)
    /// to `<folder>/<n>`, answers 200 with an empty body, closes; it exits when its standard input closes.
    static let recorder = #"""
        import os, socket, sys, threading
        folder = sys.argv[1]
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        print(server.getsockname()[1], flush=True)
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
        count = 0
        while True:
            conn, _ = server.accept()
            conn.settimeout(10)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            while len(body) < length:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                body += chunk
            with open(os.path.join(folder, str(count)), "wb") as out:
                out.write(head + b"\r\n\r\n" + body)
            count += 1
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            conn.close()
        """#

    /// A recorded request: its request line, its fields sorted (the two senders order them differently), its body.
    struct Received: Equatable, CustomStringConvertible {
        var requestLine: String
        var fields: [String]
        var body: [UInt8]
        var description: String { "\(requestLine) \(fields) \(body.count) body bytes" }

        init(_ bytes: [UInt8]) {
            let separator = Array("\r\n\r\n".utf8)
            let end = bytes.indices.first { bytes[$0...].starts(with: separator) } ?? bytes.count
            let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
            requestLine = lines.first ?? ""
            fields = lines.dropFirst().sorted()
            body = Array(bytes.dropFirst(end + 4))
        }
    }

    @Test func curlSendsWhatWireSends() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.recorder.write(toFile: folder + "/recorder.py", atomically: true, encoding: .utf8)
        let recordings = folder + "/requests"
        try FileManager.default.createDirectory(atPath: recordings, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", folder + "/recorder.py", recordings]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        defer {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        var portLine: [UInt8] = []
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != 0x0A { portLine.append(byte) }
        let port = try #require(Int(String(decoding: portLine, as: UTF8.self)))

        let bodyFile = folder + "/body.bin"
        let fileBytes: [UInt8] = (0..<3000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try Data(fileBytes).write(to: URL(fileURLWithPath: bodyFile))
        let base = try BaseURL("http://127.0.0.1:\(port)/v1")
        var headers = HTTPHeaders()
        headers.add(name: "X-Quote", value: #"it's "q" $HOME `id` \ ;|&"#)
        headers.add(name: "X-Unicode", value: "café")
        headers.add(name: "Content-Type", value: "application/octet-stream")
        let requests = [
            ClientRequest(url: try base.resolve("café/a b?q=ü&x='1'"), headers: headers),
            ClientRequest(
                url: try base.resolve("up"), method: "POST", headers: headers,
                body: .data(Data(Array("line1\r\nit's\n".utf8) + [0x00, 0xFF, 0xC3, 0x28, 0x01, 0x7F]))),
            ClientRequest(url: try base.resolve("/put"), method: "PUT", body: .data(Data("@not-a-file $x".utf8))),
            ClientRequest(url: try base.resolve("file"), method: "POST", body: .file(path: bodyFile)),
            ClientRequest(url: try base.resolve("gone#frag"), method: "DELETE", headers: headers),
            ClientRequest(
                url: try base.resolve("agent"), headers: ["User-Agent": "acme/2.0 (Linux)", "Accept": "application/json"]),
        ]
        // No default User-Agent: the client sends the request's fields, and only Host and Content-Length besides.
        var configuration = HTTPClientConfiguration()
        configuration.userAgent = nil
        let client = try HTTPClient(configuration: configuration)
        var count = 0
        for request in requests {
            let wireRequest = HTTPClientRequest(
                url: request.url.absoluteString, method: HTTPMethod(request.method),
                headers: request.headers, body: request.body?.wireBody)
            _ = try await client.execute(wireRequest, timeout: .seconds(10))
            #expect(try runBash(request.curlDescription + " --silent --output /dev/null --max-time 10") == 0)
            let wire = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(recordings)/\(count)")))
            let curl = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(recordings)/\(count + 1)")))
            count += 2
            #expect(Received(curl) == Received(wire), "\(request.curlDescription)")
            // The fragment stays on the URL and is never sent.
            #expect(!Received(wire).requestLine.contains("#"))
        }
        await client.shutdown()
    }
}
