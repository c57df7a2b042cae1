import Foundation
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireClient

/// One pass over a request body, collected.
func collect(_ body: RequestBody?) async throws -> Data {
    switch try #require(body) {
    case .data(let data):
        return data
    case .stream(_, let make):
        var data = Data()
        for try await chunk in make() { data.append(chunk) }
        return data
    case .file(let path):
        return try Data(contentsOf: URL(fileURLWithPath: path))
    case .composite(let pieces):
        // What a session checks before it sends pieces: each file still has the size it had when appended.
        var data = Data()
        for piece in pieces {
            switch piece {
            case .data(let bytes):
                data.append(bytes)
            case .file(let path, let size):
                guard let contents = try? Data(contentsOf: URL(fileURLWithPath: path)) else {
                    throw ClientError(.fileNotReachable)
                }
                guard Int64(contents.count) == size else { throw ClientError(.bodyLengthMismatch) }
                data.append(contents)
            }
        }
        return data
    }
}

/// The chunks of one pass over a request body.
func chunks(of body: RequestBody) async throws -> [Data] {
    guard case .stream(_, let make) = body else { return [] }
    var chunks: [Data] = []
    for try await chunk in make() { chunks.append(chunk) }
    return chunks
}

/// The error a pass over `body` throws, as a `ClientError`.
func passError(_ body: RequestBody) async -> ClientError? {
    do {
        _ = try await collect(body)
        return nil
    } catch {
        return error as? ClientError
    }
}

/// A stream of `bytes` in chunks of `size`.
func stream(of bytes: Data, chunkSize size: Int = 1000) -> AsyncThrowingStream<Data, any Error> {
    AsyncThrowingStream { continuation in
        var offset = 0
        while offset < bytes.count {
            continuation.yield(bytes.subdata(in: offset..<min(bytes.count, offset + size)))
            offset += size
        }
        continuation.finish()
    }
}

/// Deterministic bytes that are not all alike (so a misplaced slice changes the digest).
func patternedBytes(_ count: Int, seed: UInt8 = 7) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &+ ($0 >> 8)) })
}

/// A clock that records every sleep asked of it and returns at once: the throttle's waits, counted without waiting.
final class RecordingClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let state = Lock((now: Duration.zero, sleeps: [Duration]()))
    var now: Instant { Instant(offset: state.withLock { $0.now }) }
    var minimumResolution: Duration { .nanoseconds(1) }
    /// The durations slept, in order.
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        state.withLock { state in
            state.sleeps.append(deadline.offset - state.now)
            state.now = max(state.now, deadline.offset)
        }
    }
}

/// `sha256sum` of a file, through the shell (hex).
func sha256Hex(ofFile path: String) throws -> String {
    let output = path + ".sha256"
    defer { try? FileManager.default.removeItem(atPath: output) }
    #expect(try runBash("sha256sum '\(path)' | cut -d' ' -f1 > '\(output)'") == 0)
    return try String(contentsOfFile: output, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
}
