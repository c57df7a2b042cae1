/// Sending a `.segments` body: bytes as they are, files as regions the kernel sends itself on a plain connection.
extension HTTPClient {
    /// The most of a file handed to the connection at once: the pump waits for the socket to drain between regions,
    /// so upload progress (and a caller's idle timer) hears of the transfer at least every 4 MiB.
    static let fileRegionSize = 4 * 1024 * 1024

    /// The size of the pieces a file is read in when the connection cannot take regions (TLS).
    static let filePieceSize = 256 * 1024

    /// Sends `segments` in order, the last byte marking the request written.
    /// - Parameters:
    ///   - write: Writes bytes (the last piece with `last`), waiting for the socket to drain.
    ///   - progress: Told of the bytes of each region once the connection has taken it.
    func pumpSegments(
        _ segments: [BodySegment], pause: (@Sendable () async -> Void)?,
        to connection: LoopBound<HTTP1ClientConnection>, exchange: HTTP1ClientConnection.ExchangeID,
        write: (ByteBuffer, Bool) async throws(HTTPClientError) -> Void,
        progress: (@Sendable (Int) -> Void)?
    ) async throws(HTTPClientError) {
        guard let lastIndex = segments.lastIndex(where: { $0.count > 0 }) else {
            await pause?()
            try await write(ByteBuffer(), true)
            return
        }
        var takesRegions: Bool?
        for (index, segment) in segments.enumerated() where segment.count > 0 {
            let final = index == lastIndex
            switch segment {
            case .bytes(let bytes):
                await pause?()
                try await write(bytes, final)
            case .file(let path, let size):
                let file: RegularFile
                do { file = try RegularFile(path: path) } catch {
                    throw HTTPClientError(
                        .writeFailed, "cannot open the body file \(path): \(error)", ioError: error,
                        mayHaveBeenProcessed: true)
                }
                guard file.size == size else {
                    throw HTTPClientError(
                        .writeFailed, "the body file \(path) has \(file.size) bytes, \(size) were declared",
                        mayHaveBeenProcessed: true)
                }
                if takesRegions == nil {
                    takesRegions = await withCheckedContinuation { continuation in
                        connection.loop.execute {
                            continuation.resume(returning: connection.value.takesFileRegions(for: exchange))
                        }
                    }
                }
                var offset = 0
                while offset < size {
                    await pause?()
                    if takesRegions == true {
                        let count = min(Self.fileRegionSize, size - offset)
                        let region = file.region(offset..<offset + count)
                        let last = final && offset + count == size
                        let result = await withUnsafeContinuation { continuation in
                            connection.loop.execute {
                                connection.value.writeBodyRegion(region, isLast: last, for: exchange, continuation: continuation)
                            }
                        }
                        try result.get()
                        progress?(count)
                        offset += count
                    } else {
                        let piece: ByteBuffer
                        do { piece = try file.read(at: offset, upTo: min(Self.filePieceSize, size - offset)) } catch {
                            throw HTTPClientError(
                                .writeFailed, "reading the body file \(path) failed: \(error)", ioError: error,
                                mayHaveBeenProcessed: true)
                        }
                        guard piece.readableBytes > 0 else {
                            throw HTTPClientError(
                                .writeFailed, "the body file \(path) ended at byte \(offset), \(size) were declared",
                                mayHaveBeenProcessed: true)
                        }
                        offset += piece.readableBytes
                        try await write(piece, final && offset == size)
                    }
                }
            }
        }
    }
}
