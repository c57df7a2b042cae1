import Foundation
import Glibc
import Testing
import Wire

/// `LocalFiles.replaceContents` and `makeDirectories`: files that may hold secrets are created private and keep the
/// mode their owner gave them when rewritten. Modes are read with `stat`; a new file is checked for the absence of
/// group and other bits, which holds under any umask.
@Suite(.timeLimit(.minutes(1)))
struct PrivateFilesTests {
    static func folder() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("wire-private-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    @Test func aNewFileIsPrivateAndAnExistingOneKeepsItsMode() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/jar"
        try LocalFiles.replaceContents(atPath: path, with: Array("one".utf8))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one")
        let created = try #require(Self.mode(path))
        #expect(created & 0o077 == 0 && created & 0o600 == 0o600, "created \(String(created, radix: 8))")
        for kept: mode_t in [0o600, 0o640, 0o604, 0o400] {
            #expect(chmod(path, kept) == 0)
            try LocalFiles.replaceContents(atPath: path, with: Array("mode \(kept)".utf8))
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "mode \(kept)")
            #expect(Self.mode(path) == kept, "kept \(String(kept, radix: 8)), got \(String(Self.mode(path) ?? 0, radix: 8))")
        }
        // Nothing left beside it: every temporary file was renamed.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["jar"])
    }

    @Test func aSymbolicLinkStaysAndItsFileIsReplaced() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/real", withIntermediateDirectories: false)
        let real = folder + "/real/jar"
        try Data("old".utf8).write(to: URL(fileURLWithPath: real))
        #expect(chmod(real, 0o600) == 0)
        #expect(symlink(real, folder + "/link") == 0)
        try LocalFiles.replaceContents(atPath: folder + "/link", with: Array("new".utf8))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder + "/link") == real)
        #expect(try String(contentsOfFile: real, encoding: .utf8) == "new")
        #expect(Self.mode(real) == 0o600)
    }

    @Test func aFailedReplacementLeavesTheFileAndNoTemporaryFile() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(throws: IOError.self) { try LocalFiles.replaceContents(atPath: folder + "/missing/jar", with: [1]) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    @Test func missingDirectoriesAreCreatedPrivateAndExistingOnesLeftAlone() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try LocalFiles.makeDirectories(atPath: folder + "/a/b/c/")
        for path in [folder + "/a", folder + "/a/b", folder + "/a/b/c"] {
            let mode = try #require(Self.mode(path))
            #expect(mode & 0o077 == 0 && mode & 0o700 == 0o700, "\(path): \(String(mode, radix: 8))")
        }
        #expect(chmod(folder + "/a/b/c", 0o755) == 0)
        try LocalFiles.makeDirectories(atPath: folder + "/a/b/c")
        #expect(Self.mode(folder + "/a/b/c") == 0o755)
        try Data().write(to: URL(fileURLWithPath: folder + "/file"))
        #expect(throws: IOError.self) { try LocalFiles.makeDirectories(atPath: folder + "/file") }
    }
}
