import Foundation
import Testing

/// `Resources/curl_peer.py`, a raw HTTP/1.1 server that records every request byte for byte, with the runs of
/// `wire` and of curl 7.88 beside it, so a test compares what arrives from each.
struct CurlPeer {
    /// `http://127.0.0.1:PORT`.
    let base: String
    private let process: TestProcess

    static let curl = URL(fileURLWithPath: "/usr/bin/curl")

    /// Runs `body` with a fresh peer and a temporary folder, removed after; with `abstractSocket`, the peer also
    /// listens on that name in Linux's abstract Unix namespace.
    static func with(abstractSocket: String? = nil, _ body: (CurlPeer, URL) async throws -> Void) async throws {
        let extra = abstractSocket.map { ["--abstract", $0] } ?? []
        let process = try TestProcess("/usr/bin/env", ["python3", "\(testResources)/curl_peer.py"] + extra)
        defer { process.stop() }
        guard let port = Int(try await process.firstLine()) else { throw TestTimeout(seconds: 0) }
        let folder = try WireToolRunner.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(CurlPeer(base: "http://127.0.0.1:\(port)", process: process), folder)
    }

    /// The requests received since the last call (head and body, as text with each byte one code point), in order.
    func requests() async throws -> [String] {
        let run = try await WireToolRunner.run(program: Self.curl, ["-s", base + "/_log"])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(run.output)) as? [String])
        return list
    }

    /// The request heads, each without its body, as lines without their line ends.
    func heads() async throws -> [[String]] {
        try await requests().map { request in
            let head = request.components(separatedBy: "\r\n\r\n").first ?? request
            return head.components(separatedBy: "\r\n")
        }
    }

    /// Runs `wire get` (or `wire request` with `command`) with `words`.
    func wire(_ words: [String], command: String = "get") async throws -> WireToolRunner.Run {
        try await WireToolRunner.run([command] + words)
    }

    /// Runs curl with `words`.
    func curl(_ words: [String]) async throws -> WireToolRunner.Run {
        try await WireToolRunner.run(program: Self.curl, words)
    }

    /// A URL on the peer whose answer the query describes (see `curl_peer.py`).
    func url(_ path: String) -> String { base + path }

    /// The request heads of `wire` and of curl for the same words, with curl's `User-Agent` value written as Wire's,
    /// the blanks at the ends of lines dropped (Wire writes `Name: ` for an empty value, curl `Name:`) and
    /// `Content-Length` moved last (Wire writes the framing field after the others, curl before `Content-Type`).
    func compareHeads(_ words: [String]) async throws -> (wire: [[String]], curl: [[String]]) {
        _ = try await requests()
        let wireRun = try await wire(["-s"] + words)
        #expect(wireRun.status == 0, "\(wireRun.errors)")
        let wireHeads = try await heads().map(Self.normalized)
        let curlRun = try await curl(["-s"] + words)
        #expect(curlRun.status == 0, "\(curlRun.errors)")
        let curlHeads = try await heads().map(Self.normalized)
        return (wireHeads, curlHeads)
    }

    private static func normalized(_ lines: [String]) -> [String] {
        let trimmed = lines.map { line in
            var line = line
            while line.hasSuffix(" ") { line.removeLast() }
            return line.lowercased().hasPrefix("user-agent: curl/") ? "User-Agent: Wire/0.1" : line
        }
        let isLength = { (line: String) in line.lowercased().hasPrefix("content-length:") }
        return trimmed.filter { !isLength($0) } + trimmed.filter(isLength)
    }
}
