import Foundation
import Testing
import Wire
import WireTestSupport

extension IOSuite {
    /// `AsyncFile` through the public API: write, append, read at an offset, sync, atomic rename, and what a closed
    /// or wrong file reports.
    @Suite(.exclusiveIO(minutes: 1))
    struct AsyncFileTests {
        static func folder() throws -> String {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("wire-asyncfile-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return url.path
        }

        @Test func writesAppendsReadsAtAnOffsetAndRenamesAtomically() async throws {
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let partial = folder + "/entry.partial"
            let file = try await AsyncFile.open(partial, mode: .truncate)
            let megabyte = ByteBuffer(bytes: (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try await file.write(megabyte)
            try await file.write(ByteBuffer(string: "tail"))
            try await file.sync()
            #expect(try await file.size() == (1 << 20) + 4)
            try await file.close()
            try await file.close()

            // A resumed download appends.
            let resumed = try await AsyncFile.open(partial, mode: .append)
            try await resumed.write(ByteBuffer(string: "+more"))
            try await resumed.close()

            try await AsyncFile.rename(partial, to: folder + "/entry")
            #expect(!FileManager.default.fileExists(atPath: partial))
            let reader = try await AsyncFile.open(folder + "/entry", mode: .read)
            #expect(
                try await reader.read(at: 1000, upTo: 16).readableBytesArray == Array(megabyte.readableBytesArray[1000..<1016]))
            #expect(try await reader.read(at: 1 << 20, upTo: 100) == ByteBuffer(string: "tail+more"))
            #expect(try await reader.read(at: 10 << 20, upTo: 100).readableBytes == 0)
            try await reader.close()
            do {
                _ = try await reader.read(at: 0, upTo: 1)
                Issue.record("a closed file read")
            } catch {
                #expect(error.errno == Errno(rawValue: EBADF))
            }
        }

        @Test func createsWithPermissionsLinksWithoutReplacingAndMakesDirectories() async throws {
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let directory = folder + "/sub"
            try await AsyncFile.makeDirectory(directory, permissions: 0o700)
            try await AsyncFile.makeDirectory(directory, permissions: 0o700)  // already there: fine
            let previous = umask(0)
            defer { umask(previous) }
            let path = directory + "/private"
            try await AsyncFile.open(path, mode: .createNew, permissions: 0o600).close()
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            do {
                try await AsyncFile.makeDirectory(path)
                Issue.record("a directory made over a file")
            } catch {
                #expect(error.errno == Errno(rawValue: EEXIST) && error.syscall == "mkdir")
            }
            try await AsyncFile.link(path, to: directory + "/second")
            #expect(FileManager.default.fileExists(atPath: directory + "/second"))
            do {
                try await AsyncFile.link(path, to: directory + "/second")
                Issue.record("link replaced an existing file")
            } catch {
                #expect(error.errno == Errno(rawValue: EEXIST) && error.syscall == "link")
            }
        }

        @Test func createNewRefusesAnExistingFileAndOpeningADirectoryOrNothingFails() async throws {
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let path = folder + "/once"
            try await AsyncFile.open(path, mode: .createNew).close()
            await #expect(throws: IOError.self) { try await AsyncFile.open(path, mode: .createNew) }
            do {
                _ = try await AsyncFile.open(folder, mode: .read)
                Issue.record("a directory opened")
            } catch {
                #expect(error.errno == Errno(rawValue: EISDIR))
            }
            do {
                _ = try await AsyncFile.open(folder + "/missing", mode: .read)
                Issue.record("a missing file opened")
            } catch {
                #expect(error.errno == Errno(rawValue: ENOENT) && error.syscall == "open")
            }
            try await AsyncFile.remove(path)
            #expect(!FileManager.default.fileExists(atPath: path))
        }

        @Test func closeWaitsForAnOperationUnderWay() async throws {
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let file = try await AsyncFile.open(folder + "/big", mode: .truncate)
            let chunk = ByteBuffer(bytes: [UInt8](repeating: 7, count: 8 << 20))
            // The write and the close race; the write either completes whole or never starts, never hits a closed fd.
            async let written: Void = file.write(chunk)
            try await file.close()
            do { try await written } catch let error as IOError { #expect(error.errno == Errno(rawValue: EBADF)) }
            let size = try FileManager.default.attributesOfItem(atPath: folder + "/big")[.size] as? Int
            #expect(size == 0 || size == 8 << 20)
        }
    }
}
