import FoundationEssentials
import Wire

/// One pass over a multipart body: the shell around `MultipartEncoder` that reads each part's source when its turn
/// comes and hands out chunks. Files are read at offsets on Wire's file threads (`AsyncFile`), a piece at a time, so
/// no file is ever held in memory; a stream part is pulled chunk by chunk. Every pass starts from byte 0, which is
/// what makes the body replayable.
///
/// `next()` is called one at a time (by the stream that wraps the reader); the state is taken out for the call and
/// put back after it, so a pass that threw is over.
actor MultipartBodyReader {
    /// The source of the part whose body is being read.
    private enum Current {
        /// No part body under way.
        case none
        /// Bytes in memory, from `offset`.
        case data(Data, offset: Int)
        /// A file opened for this pass, from `offset` to `size`.
        case file(AsyncFile, path: String, offset: Int64, size: Int64)
        /// A stream part: its iterator, the bytes received so far, the declared length, and the part of the last
        /// chunk not handed out yet.
        case stream(AsyncThrowingStream<Data, any Error>.Iterator, received: Int64, length: Int64, leftover: Data)
    }

    private struct State {
        var encoder: MultipartEncoder
        var current: Current = .none
        /// A chunk was handed out and the throttle's delay has not been waited yet.
        var owesDelay = false
    }

    private let parts: [MultipartPart]
    private let throttle: MultipartFormData.Throttle
    private let clock: any Clock<Duration>
    private var state: State?

    /// A pass over `parts` with `boundary`.
    init(boundary: String, parts: [MultipartPart], throttle: MultipartFormData.Throttle, clock: any Clock<Duration>) {
        self.parts = parts
        self.throttle = throttle
        self.clock = clock
        state = State(encoder: MultipartEncoder(boundary: boundary, headerBlocks: parts.map(\.headerBytes)))
    }

    /// The most a chunk holds: 256 KiB (the body high watermark of a Wire connection), or the throttle's packet size when smaller.
    private var chunkSize: Int { max(1, min(256 * 1024, throttle.packetSize)) }

    /// The next chunk, or nil at the end of the body.
    /// - Throws: `ClientError` `.bodyLengthMismatch` when a file's size changed since it was appended or a stream
    ///   part yields another length than declared; `.fileNotReachable` when a file cannot be read; a stream part's
    ///   own error.
    func next() async throws -> Data? {
        guard var current = state else { return nil }
        state = nil
        if current.owesDelay, throttle.delay > .zero {
            // A timer, not a blocked thread: AF's `sleepForTimeInterval` on a stream thread becomes a suspension.
            try await clock.sleep(for: throttle.delay)
        }
        current.owesDelay = false
        var chunk = Data()
        let size = chunkSize
        do {
            while chunk.count < size, let piece = try await produce(into: &current, upTo: size - chunk.count) {
                chunk.append(piece)
            }
        } catch {
            if case .file(let file, _, _, _) = current.current { try? await file.close() }
            throw error
        }
        guard !chunk.isEmpty else { return nil }
        current.owesDelay = true
        state = current
        return chunk
    }

    /// Up to `limit` bytes from where `state` is, moving through the encoder's steps; nil at the end of the body.
    private func produce(into state: inout State, upTo limit: Int) async throws -> Data? {
        while true {
            switch state.current {
            case .none:
                switch state.encoder.next() {
                case .bytes(let bytes):
                    state.current = .data(bytes, offset: 0)
                case .body(let index):
                    state.current = try await open(parts[index])
                case .finished:
                    return nil
                }
            case .data(let bytes, let offset):
                guard offset < bytes.count else {
                    state.current = .none
                    continue
                }
                let end = min(bytes.count, offset + limit)
                state.current = .data(bytes, offset: end)
                return bytes.subdata(in: bytes.startIndex + offset..<bytes.startIndex + end)
            case .file(let file, let path, let offset, let size):
                guard offset < size else {
                    try? await file.close()
                    state.current = .none
                    continue
                }
                let piece: ByteBuffer
                do {
                    piece = try await file.read(at: Int(offset), upTo: Int(min(Int64(limit), size - offset)))
                } catch {
                    throw ClientError(
                        .fileNotReachable, underlying: error, failureReason: "cannot read the part file \(path): \(error)")
                }
                guard piece.readableBytes > 0 else {
                    try? await file.close()
                    state.current = .none
                    throw ClientError(
                        .bodyLengthMismatch,
                        failureReason:
                            "the part file \(path) ended at byte \(offset), \(size) were declared when it was appended")
                }
                state.current = .file(file, path: path, offset: offset + Int64(piece.readableBytes), size: size)
                var data = Data()
                data.append(piece)
                return data
            case .stream(var iterator, let received, let length, let leftover):
                if !leftover.isEmpty {
                    let count = min(limit, leftover.count)
                    state.current = .stream(iterator, received: received, length: length, leftover: leftover.dropFirst(count))
                    return Data(leftover.prefix(count))
                }
                // Pulled once more after the declared length too: a stream must end there, not just reach it.
                let chunk = try await iterator.next(isolation: self)
                guard let chunk else {
                    guard received == length else {
                        throw ClientError(
                            .bodyLengthMismatch,
                            failureReason:
                                "a stream part ended after \(received) bytes, \(length) were declared")
                    }
                    state.current = .none
                    continue
                }
                guard Int64(chunk.count) <= length - received else {
                    throw ClientError(
                        .bodyLengthMismatch,
                        failureReason:
                            "a stream part yielded more than the \(length) bytes declared")
                }
                state.current = .stream(iterator, received: received + Int64(chunk.count), length: length, leftover: chunk)
            }
        }
    }

    /// The reading state for `part`'s body: files are opened here, and their size checked against the appended one.
    private func open(_ part: MultipartPart) async throws -> Current {
        switch part.source {
        case .data(let data):
            return .data(data, offset: 0)
        case .file(let path, let size):
            let file: AsyncFile
            let now: Int
            do {
                file = try await AsyncFile.open(path, mode: .read)
                now = try await file.size()
            } catch {
                throw ClientError(
                    .fileNotReachable, underlying: error, failureReason: "cannot open the part file \(path): \(error)")
            }
            guard Int64(now) == size else {
                try? await file.close()
                throw ClientError(
                    .bodyLengthMismatch,
                    failureReason:
                        "the part file \(path) has \(now) bytes, \(size) when it was appended")
            }
            return .file(file, path: path, offset: 0, size: size)
        case .stream(let length, let make):
            return .stream(make().makeAsyncIterator(), received: 0, length: length, leftover: Data())
        }
    }
}
