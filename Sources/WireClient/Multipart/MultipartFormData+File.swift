import FoundationEssentials
import Wire

extension MultipartFormData {
    /// Writes the whole body to `path` (created 0600 or truncated), part by part, on Wire's file threads (AF's
    /// `requestWithMultipartFormRequest:writingStreamContentsToFile:`), for an upload from that file.
    /// - Parameter path: The file to write.
    /// - Throws: `.cannotWriteToFile` with the `IOError` when the file cannot be written; a part's own error
    ///   (`.fileNotReachable`, `.bodyLengthMismatch`) when it cannot be read. The file may then hold a partial body.
    public func writeStreamContents(to path: String) async throws(ClientError) {
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
            stream = AsyncThrowingStream { $0.yield(data); $0.finish() }
        case .stream(_, let make):
            stream = make()
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
}
