import Foundation
import Synchronization
import Testing
import Wire
import WireClient
import WireTestSupport

/// A 256 MiB file part sent with flat memory: the kernel sends the file from the page cache (`sendfile(2)`) as the
/// socket takes it, so the process's peak resident size grows by far less than the file.
@Suite(.exclusiveIO(minutes: 3))
struct MultipartLargeUploadTests {
    static let size = 256 << 20

    @Test(.disabled(if: Sanitizer.current != nil, Sanitizer.distortsMeasurements))
    func aLargeFilePartIsUploadedWithFlatMemory() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/large.bin"
        // Generated, not sparse: a misplaced piece changes the digest.
        #expect(try runBash("head -c \(Self.size) /dev/urandom > '\(path)'") == 0)
        let digest = try sha256Hex(ofFile: path)
        let receiver = try await MultipartReceiver()
        defer { receiver.stop() }
        let manager = try HTTPSessionManager()
        manager.responseSerializer = HTTPResponseSerializer()

        let baseline = try Memory.resetPeak()
        let sentByKernel = SendFileStatistics.bytesSent.load(ordering: .relaxed)
        let result = try await manager.post(receiver.url().absoluteString, parameters: ["kind": "large"]) { form in
            try form.appendPart(fileAt: path, name: "file")
        }
        let peak = try Memory.kibibytes("VmHWM")
        let report = try MultipartReceiver.report(result.data)
        #expect(report.parts.map(\.name) == ["kind", "file"])
        #expect(report.parts.last?.size == Self.size)
        #expect(report.parts.last?.sha256 == digest)
        #expect(report.received == report.contentLength)
        // On a plain connection the kernel sent the file from the page cache, not the process.
        #expect(SendFileStatistics.bytesSent.load(ordering: .relaxed) - sentByKernel >= Self.size)
        // The whole file in memory would be 262,144 KiB; a streamed body stays within a few MiB of buffers.
        #expect(peak - baseline < 48 * 1024, "peak RSS grew by \(peak - baseline) KiB")
    }
}

/// The process's resident memory, from /proc/self/status.
enum Memory {
    /// A field of /proc/self/status in KiB (`VmRSS`, `VmHWM`).
    static func kibibytes(_ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field + ":") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? ""))
    }

    /// Resets the peak (`VmHWM`) to the current resident size (writing 5 to /proc/self/clear_refs) and returns it.
    static func resetPeak() throws -> Int {
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        return try kibibytes("VmRSS")
    }
}
