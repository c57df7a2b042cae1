import Foundation
import Glibc
import Testing
import Wire

extension IOSuite {
    /// `SocketStream` as a `FileRegionStream`: regions go out with `sendfile(2)` in order with the bytes around them,
    /// a file that shrinks closes the stream with `FileTruncatedError`, and a vanished peer gives EPIPE, not SIGPIPE.
    @Suite struct SocketStreamFileRegionTests {
        /// A file of `count` bytes (`index % 251`), removed by the caller.
        static func makeFile(count: Int) throws -> String {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("wire-region-\(UUID().uuidString)").path
            try Data((0..<count).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: path))
            return path
        }

        @Test func regionsGoOutInOrderWithTheBytesAroundThem() async throws {
            let path = try Self.makeFile(count: 5 << 20)
            defer { unlink(path) }
            let file = try RegularFile(path: path)
            try await withLoop { loop in
                try await withTimeout {
                    let pair = try await makeStreamPair(
                        listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 0), loop: loop)
                    let pending = try await loop.submit { () -> Int in
                        let stream = pair.server.value
                        stream.write([ByteBuffer(string: "<")])
                        stream.write(file.region(10..<(4 << 20)))  // more than one flush may send
                        stream.write([ByteBuffer(string: "|")])
                        stream.write(file.region(0..<3))
                        [UInt8(ascii: ">")].withUnsafeBytes { stream.write(copying: $0) }
                        return stream.pendingWriteBytes
                    }
                    #expect(pending > 0)
                    let total = 1 + ((4 << 20) - 10) + 1 + 3 + 1
                    await StreamPair.wait(pair.clientDelegate) { $0.receivedCount == total }
                    let received = try await loop.submit { pair.clientDelegate.value.received }
                    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
                    var expected = Array("<".utf8) + Array(bytes[10..<(4 << 20)]) + Array("|".utf8)
                    expected += Array(bytes[0..<3]) + Array(">".utf8)
                    #expect(received == expected)
                    #expect(try await loop.submit { pair.server.value.pendingWriteBytes } == 0)
                    try await pair.close()
                }
            }
        }

        @Test func aFileThatShrankClosesTheStream() async throws {
            let path = try Self.makeFile(count: 1 << 20)
            defer { unlink(path) }
            let file = try RegularFile(path: path)
            #expect(truncate(path, 1000) == 0)
            try await withLoop { loop in
                try await withTimeout {
                    let pair = try await makeStreamPair(
                        listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 0), loop: loop)
                    try await loop.submit { pair.server.value.write(file.region()) }
                    await StreamPair.wait(pair.serverDelegate) { $0.closed }
                    let error = try await loop.submit { pair.serverDelegate.value.closeError as? FileTruncatedError }
                    #expect(error == FileTruncatedError(path: path, offset: 1000))
                    try await pair.close()
                }
            }
        }

        @Test func sendfileToAClosedPeerIsEPIPEAndNoSignal() throws {
            let path = try Self.makeFile(count: 4096)
            defer { unlink(path) }
            let file = try RegularFile(path: path)
            var ends: [CInt] = [0, 0]
            #expect(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue), 0, &ends) == 0)
            close(ends[1])
            defer { close(ends[0]) }
            var offset = 0
            #expect(throws: IOError(syscall: "sendfile", errno: .brokenPipe)) {
                _ = try Posix.sendfile(to: ends[0], from: file.rawDescriptor, offset: &offset, count: 4096)
            }
            // The process is alive (SIGPIPE's default action would have ended it) and nothing is left pending.
            var pending = sigset_t()
            #expect(sigpending(&pending) == 0)
            #expect(sigismember(&pending, SIGPIPE) == 0)
            #expect(offset == 0)
        }
    }
}
