import Foundation
import Testing

/// A Python receiver on 127.0.0.1, port 0, that reads each POST body to a file and answers with what Python's
/// standard library parses out of it (`email` with `policy=HTTP`): each part's name, file name, type, size and
/// SHA-256, as JSON. For bodies over 32 MiB it finds the parts by scanning for the boundary instead (the `email`
/// parser would hold the whole body several times over), so large uploads stay cheap on the receiving side.
final class MultipartReceiver {
    /// One part as Python saw it.
    struct Part: Codable, Equatable, Sendable {
        var name: String?
        var filename: String?
        var type: String?
        var size: Int
        var sha256: String
    }

    /// What the receiver answers for one request.
    struct Report: Codable, Sendable {
        var method: String
        var contentType: String?
        var contentLength: Int?
        var received: Int
        var parts: [Part]
        var bodySHA256: String
    }

    static let script = #"""
        import sys, json, hashlib, mmap, os, tempfile, email.parser, email.policy
        from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

        def parse_small(ctype, body):
            msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                b"Content-Type: " + ctype.encode("latin-1") + b"\r\n\r\n" + body)
            parts = []
            for part in msg.iter_parts():
                payload = part.get_payload(decode=True) or b""
                parts.append({"name": part.get_param("name", header="content-disposition"),
                              "filename": part.get_filename(),
                              "type": part.get("Content-Type"),
                              "size": len(payload), "sha256": hashlib.sha256(payload).hexdigest()})
            return parts

        def parse_large(ctype, path):
            boundary = ctype.split("boundary=", 1)[1].strip().strip('"').encode("latin-1")
            parts = []
            with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                delimiter = b"\r\n--" + boundary
                start = m.find(b"--" + boundary + b"\r\n")
                position = start + len(boundary) + 4
                while True:
                    head_end = m.find(b"\r\n\r\n", position)
                    fields = {}
                    for line in m[position:head_end].split(b"\r\n"):
                        key, _, value = line.partition(b":")
                        fields[key.strip().lower().decode()] = value.strip().decode("latin-1")
                    end = m.find(delimiter, head_end + 4)
                    digest = hashlib.sha256()
                    view = memoryview(m)[head_end + 4:end]
                    for offset in range(0, len(view), 1 << 22):
                        digest.update(view[offset:offset + (1 << 22)])
                    view.release()
                    disposition = fields.get("content-disposition", "")
                    params = dict(p.strip().split("=", 1) for p in disposition.split(";")[1:])
                    parts.append({"name": params.get("name", "").strip('"'), "filename": params.get("filename", "").strip('"') or None,
                                  "type": fields.get("content-type"), "size": end - head_end - 4, "sha256": digest.hexdigest()})
                    if m[end + len(delimiter):end + len(delimiter) + 2] == b"--":
                        break
                    position = end + len(delimiter) + 2
            return parts

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *args):
                pass
            def do_POST(self):
                length = self.headers.get("Content-Length")
                digest = hashlib.sha256()
                fd, path = tempfile.mkstemp(prefix="multipart-receiver-")
                received = 0
                with os.fdopen(fd, "wb") as out:
                    remaining = int(length) if length is not None else 0
                    while remaining > 0:
                        chunk = self.rfile.read(min(remaining, 1 << 20))
                        if not chunk:
                            break
                        out.write(chunk); digest.update(chunk)
                        received += len(chunk); remaining -= len(chunk)
                ctype = self.headers.get("Content-Type")
                try:
                    if ctype and ctype.startswith("multipart/") and received == int(length or 0):
                        if received <= 32 << 20:
                            with open(path, "rb") as f:
                                parts = parse_small(ctype, f.read())
                        else:
                            parts = parse_large(ctype, path)
                    else:
                        parts = []
                finally:
                    os.unlink(path)
                answer = json.dumps({"method": self.command, "contentType": ctype,
                                     "contentLength": int(length) if length is not None else None,
                                     "received": received, "parts": parts, "bodySHA256": digest.hexdigest()}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    private let process: Process
    /// The port the receiver listens on.
    let port: Int
    private let folder: String

    /// Starts the receiver and waits (at most 10 s) for its port.
    init() async throws {
        folder = NSTemporaryDirectory() + "multipart-receiver-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let scriptPath = folder + "/receiver.py"
        try Self.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        (process, port) = try await PythonPeer.start(script: scriptPath, folder: folder)
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String = "/upload") -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Decodes a report the receiver sent back.
    static func report(_ data: Data?) throws -> Report {
        try JSONDecoder().decode(Report.self, from: try #require(data))
    }

    /// Stops the receiver and removes its folder.
    func stop() {
        // SIGKILL, not terminate(): the child inherits the spawning thread's signal mask, in which SIGTERM may be
        // blocked. No wait: Foundation reaps the child, and waitUntilExit would spin a run loop in an async test.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(atPath: folder)
    }

    deinit { stop() }
}
