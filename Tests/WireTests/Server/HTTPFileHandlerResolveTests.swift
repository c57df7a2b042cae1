import Foundation
import Testing
import Wire

extension IOSuite {
    /// `HTTPFileHandler` maps targets to files only under the root's real path, whatever links and dots say.
    @Suite struct HTTPFileHandlerResolveTests {
        @Test func staysUnderTheRoot() throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let root = try #require(LocalFiles.realPath(folder.path)) + "/site"
            let manager = FileManager.default
            try manager.createDirectory(atPath: root + "/dir", withIntermediateDirectories: true)
            try manager.createDirectory(atPath: root + "/empty", withIntermediateDirectories: true)
            try Data("secret".utf8).write(to: URL(fileURLWithPath: folder.path + "/secret.txt"))
            try Data("a".utf8).write(to: URL(fileURLWithPath: root + "/a.txt"))
            try Data("i".utf8).write(to: URL(fileURLWithPath: root + "/dir/index.html"))
            try manager.createSymbolicLink(atPath: root + "/out", withDestinationPath: folder.path + "/secret.txt")
            try manager.createSymbolicLink(atPath: root + "/outdir", withDestinationPath: folder.path)
            try manager.createSymbolicLink(atPath: root + "/in", withDestinationPath: root + "/a.txt")
            // The handler takes the real path of what it is given.
            let handler = try HTTPFileHandler(root: root + "/dir/..")
            #expect(handler.root == root)

            #expect(handler.resolve("/a.txt") == root + "/a.txt")
            #expect(handler.resolve("/a.txt?x=1") == root + "/a.txt")
            #expect(handler.resolve("/dir/") == root + "/dir/index.html")
            #expect(handler.resolve("/dir") == root + "/dir/index.html")
            #expect(handler.resolve("/in") == root + "/a.txt")
            #expect(handler.resolve("/out") == nil)
            #expect(handler.resolve("/outdir/secret.txt") == nil)
            #expect(handler.resolve("/../secret.txt") == nil)
            #expect(handler.resolve("/%2e%2e/secret.txt") == nil)
            #expect(handler.resolve("/./a.txt") == nil)
            #expect(handler.resolve("/empty/") == nil)
            #expect(handler.resolve("/missing") == nil)
            #expect(handler.resolve("a.txt") == nil)
        }
    }
}
