import Foundation
import Testing
import WireClient
import WireTestSupport

/// A real nginx with `gzip on` compresses a text file on the fly (chunked, no Content-Length): a data task and a
/// download task return the original bytes.
@Suite(.sharedIO(minutes: 1), .enabled(if: TestNginx.isInstalled, "nginx is not installed"))
struct NginxContentDecodingTests {
    @Test func dataAndDownloadTasksDecodeNginxGzip() async throws {
        let text = Compression.sampleText(bytes: 400_000)
        let nginx = try TestNginx(
            files: ["a.txt": text],
            httpDirectives: "gzip on; gzip_types text/plain application/json; gzip_min_length 0;")
        defer { nginx.stop() }
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let manager = SessionManager()
        manager.responseSerializer = HTTPResponseSerializer()
        defer { manager.invalidateSession(cancelingTasks: true) }
        let url = URL(string: nginx.baseURL + "/a.txt")!
        let tasks = Recorder<SessionTask>()
        manager.dataTaskDidReceiveData = { task, _ in tasks.record(task) }
        let result = try await manager.data(for: ClientRequest(url: url))
        #expect(mismatch(result.data, text) == nil)
        #expect(result.response?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        let wire = try #require(tasks.all.last?.countOfBytesReceived)
        #expect(wire > 0 && wire < Int64(text.count) / 2)

        let destination = folder + "/a.txt"
        let download = try await manager.download(for: ClientRequest(url: url)) { _, _ in destination }
        #expect(download.response?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(mismatch(try Data(contentsOf: URL(fileURLWithPath: destination)), text) == nil)
    }
}
