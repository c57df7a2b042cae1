import Glibc

/// A descriptor the process does not own (standard input: a pipe, a terminal, a file) read in chunks, each as soon
/// as `read(2)` returns it: what a writer has put in a pipe goes on at once, without waiting for the rest or for the
/// end. For `wire get -T -`, which streams standard input as a chunked body, as curl does.
///
/// Each read blocks a thread of a pool of its own, never an event loop or a Swift concurrency thread; a descriptor
/// in non-blocking mode is waited for with `poll(2)` there. Nothing is read ahead of the consumer, so a slow
/// consumer holds the writer back through the pipe instead of piling the input up in memory. The descriptor is
/// never closed here.
package enum InputChunks {
    /// One thread, so that a read that waits for a writer forever (a terminal nobody types into) holds no thread a
    /// name lookup needs.
    private static let pool = BlockingPool(name: "wire-input", maxThreads: 1)

    /// The next chunk of at most `count` bytes (at least 1) from `descriptor`, as soon as there is one; nil at the
    /// end of the input.
    ///
    /// - Throws: `IOError` from `read(2)` or `poll(2)` (`EBADF` when standard input is closed).
    package static func next(from descriptor: CInt = STDIN_FILENO, upTo count: Int = 64 * 1024) async throws(IOError)
        -> ByteBuffer?
    {
        let size = max(1, count)
        let chunk = try await pool.run { () throws(IOError) -> ByteBuffer in try read(descriptor, upTo: size) }
        return chunk.readableBytes == 0 ? nil : chunk
    }

    /// The chunks of `descriptor` as a stream that reads one each time its consumer asks for one, and ends at the end
    /// of the input.
    package static func stream(from descriptor: CInt = STDIN_FILENO, chunkSize: Int = 64 * 1024)
        -> AsyncThrowingStream<ByteBuffer, any Error>
    {
        AsyncThrowingStream(unfolding: { try await next(from: descriptor, upTo: chunkSize) })
    }

    /// One `read(2)` of up to `count` bytes, waiting in `poll(2)` while a non-blocking descriptor has nothing; an
    /// empty buffer at the end. A closed standard input (`EBADF`) is an error to report, not a programming error.
    private static func read(_ descriptor: CInt, upTo count: Int) throws(IOError) -> ByteBuffer {
        var buffer = ByteBuffer(capacity: count)
        while true {
            let read = buffer.withUnsafeWritableBytes { space in
                Glibc.read(descriptor, space.baseAddress, min(space.count, count))
            }
            if read >= 0 {
                buffer.moveWriterIndex(forwardBy: read)
                return buffer
            }
            let error = Errno.current
            if error == .interrupted { continue }
            guard error.rawValue == EAGAIN || error.rawValue == EWOULDBLOCK else {
                throw IOError(syscall: "read", errno: error)
            }
            var waiter = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            _ = try systemCall("poll") { poll(&waiter, 1, -1) }
        }
    }
}
