import Foundation
import Glibc
import Testing
import Wire

extension IOSuite {
    /// The tool's blocking file calls: whole reads and writes, pipes, kinds and real paths.
    @Suite struct LocalFilesTests {
        @Test func writesAndReadsAFileWhole() throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appendingPathComponent("data.bin").path
            let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try LocalFiles.write(bytes, toPath: path)
            #expect(try LocalFiles.contents(atPath: path) == bytes)
            try LocalFiles.write([1, 2], toPath: path)
            #expect(try LocalFiles.contents(atPath: path) == [1, 2])
            #expect(LocalFiles.kind(atPath: path) == .regular)
            #expect(LocalFiles.kind(atPath: folder.path) == .directory)
            #expect(LocalFiles.kind(atPath: "/dev/null") == .other)
            #expect(LocalFiles.kind(atPath: folder.appendingPathComponent("missing").path) == nil)
            #expect(throws: IOError.self) { try LocalFiles.contents(atPath: folder.appendingPathComponent("missing").path) }
        }

        @Test func realPathResolvesLinksAndDots() throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let real = try #require(LocalFiles.realPath(folder.path))
            try FileManager.default.createDirectory(atPath: real + "/inner", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: real + "/link", withDestinationPath: "/etc")
            #expect(LocalFiles.realPath(real + "/inner/../inner/.") == real + "/inner")
            #expect(LocalFiles.realPath(real + "/link") == "/etc")
            #expect(LocalFiles.realPath(real + "/absent") == nil)
            #expect(LocalFiles.currentDirectory() == FileManager.default.currentDirectoryPath)
        }

        @Test func readsAPipeToEndAndWritesAcrossPartialWrites() throws {
            var ends: [CInt] = [0, 0]
            #expect(pipe(&ends) == 0)
            defer { close(ends[0]) }
            // More than a pipe holds (64 KiB), written from another thread while this one reads.
            let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let writer = ends[1]
            let thread = Foundation.Thread {
                try? LocalFiles.writeAll(bytes, to: writer)
                close(writer)
            }
            thread.start()
            #expect(try LocalFiles.readToEnd(ends[0]) == bytes)
        }
    }
}
