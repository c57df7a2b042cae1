import FoundationEssentials
import Wire

extension MultipartFormData {
    /// Writes the whole body to `path` (created 0600 or truncated), part by part, on Wire's file threads (AF's
    /// `requestWithMultipartFormRequest:writingStreamContentsToFile:`), for an upload from that file.
    /// - Parameter path: The file to write.
    /// - Throws: `.requestSerializationFailed` (nothing written) when the form refused a part (`refusedPartError`);
    ///   `.cannotWriteToFile` with the `IOError` when the file cannot be written; a part's own error
    ///   (`.fileNotReachable`, `.bodyLengthMismatch`) when it cannot be read. The file may then hold a partial body.
    public func writeStreamContents(to path: String) async throws(ClientError) {
        try checkNoPartWasRefused()
        try await Self.write(body, to: path)
    }

    /// Writes every chunk of `body` (one pass) to `path`.
    static func write(_ body: RequestBody, to path: String) async throws(ClientError) {
        let file: AsyncFile
        do {
            file = try await AsyncFile.open(path, mode: .truncate, permissions: 0o600)
        } catch {
            throw ClientError(.cannotWriteToFile, underlying: error, failureReason: "cannot create \(path): \(error)")
        }
        do throws(ClientError) {
            try await write(body, into: file)
        } catch {
            try? await file.close()
            throw error
        }
        do {
            try await file.close()
        } catch {
            throw ClientError(.cannotWriteToFile, underlying: error, failureReason: "cannot close \(path): \(error)")
        }
    }

    private static func write(_ body: RequestBody, into file: AsyncFile) async throws(ClientError) {
        let stream: AsyncThrowingStream<Data, any Error>
        switch body {
        case .data(let data):
            stream = AsyncThrowingStream {
                $0.yield(data); $0.finish()
            }
        case .stream(_, let make):
            stream = make()
        case .composite(let pieces):
            stream = Self.stream(of: pieces)
        case .file(let path):
            throw ClientError(.requestSerializationFailed, failureReason: "the body is already the file \(path)")
        }
        var iterator = stream.makeAsyncIterator()
        while true {
            let chunk: Data?
            do {
                chunk = try await iterator.next()
            } catch let error as ClientError {
                throw error
            } catch {
                throw ClientError(.requestSerializationFailed, underlying: error, failureReason: "a body part failed: \(error)")
            }
            guard let chunk else { return }
            do {
                try await file.write(ByteBuffer(bytes: chunk))
            } catch {
                throw ClientError(.cannotWriteToFile, underlying: error, failureReason: "cannot write \(file.path): \(error)")
            }
        }
    }

    /// The pieces' bytes in order, files read in 1 MiB pieces at offsets; a file that ends early or runs longer than
    /// its size fails with `.bodyLengthMismatch`.
    static func stream(of pieces: [RequestBody.Piece]) -> AsyncThrowingStream<Data, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for piece in pieces {
                        switch piece {
                        case .data(let data):
                            continuation.yield(data)
                        case .file(let path, let size):
                            try await yieldFile(path, size: size, to: continuation)
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private static func yieldFile(
        _ path: String, size: Int64,
        to continuation: AsyncThrowingStream<Data, any Error>.Continuation
    ) async throws {
        let file: AsyncFile
        do { file = try await AsyncFile.open(path, mode: .read) } catch {
            throw ClientError(.fileNotReachable, underlying: error, failureReason: "cannot open the part file \(path): \(error)")
        }
        defer { Task { try? await file.close() } }
        guard Int64(try await file.size()) == size else {
            throw ClientError(.bodyLengthMismatch, failureReason: "the part file \(path) no longer has the \(size) bytes it had")
        }
        var offset: Int64 = 0
        while offset < size {
            let piece = try await file.read(at: Int(offset), upTo: Int(min(1 << 20, size - offset)))
            guard piece.readableBytes > 0 else {
                throw ClientError(.bodyLengthMismatch, failureReason: "the part file \(path) ended at byte \(offset) of \(size)")
            }
            var data = Data()
            data.append(piece)
            continuation.yield(data)
            offset += Int64(piece.readableBytes)
        }
    }
}
