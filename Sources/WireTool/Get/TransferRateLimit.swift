import Synchronization
import Wire

/// `--limit-rate`: holds a transfer to a number of bytes per second on average, as curl does, by waiting before the
/// next read or write rather than after the fact: a body is taken from the connection only as fast as the limit
/// allows, so what the client has not taken stays in the kernel and the sender is held back.
struct TransferRateLimit: Sendable {
    /// The limit, in bytes per second.
    let bytesPerSecond: Int64
    private let start: ContinuousClock.Instant
    private var total: Int64 = 0

    /// A limit of `bytesPerSecond`, counted from now.
    init(bytesPerSecond: Int64, now: ContinuousClock.Instant = .now) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        start = now
    }

    /// Counts `count` bytes moved and waits until the average since the start is back under the limit.
    mutating func pass(_ count: Int) async {
        total += Int64(count)
        let due = start + .seconds(Double(total) / Double(bytesPerSecond))
        if due > .now { try? await Task.sleep(until: due, clock: .continuous) }
    }

    /// The size of the pieces an upload is cut into: no more than a quarter second's worth (at least 1 byte, at most
    /// 16 KiB), so the pace is even.
    static func pieceSize(for bytesPerSecond: Int64) -> Int {
        Int(min(16 * 1024, max(1, bytesPerSecond / 4)))
    }
}

/// An upload body sent at `--limit-rate`: bytes in memory or a regular file, in pieces, each released when the
/// limit allows. Made anew for each attempt, so a redirect or retry can send it again.
struct PacedUpload: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    /// Where the bytes come from.
    enum Source: Sendable {
        case bytes(ByteBuffer)
        case file(path: String)
    }

    let source: Source
    let bytesPerSecond: Int64

    func makeAsyncIterator() -> Iterator {
        Iterator(source: source, limit: TransferRateLimit(bytesPerSecond: bytesPerSecond))
    }

    /// Reads the next piece once the previous one has been paid for.
    struct Iterator: AsyncIteratorProtocol {
        let source: Source
        var limit: TransferRateLimit
        var offset = 0
        var file: RegularFile?

        init(source: Source, limit: TransferRateLimit) {
            self.source = source
            self.limit = limit
        }

        mutating func next() async throws -> ByteBuffer? {
            let size = TransferRateLimit.pieceSize(for: limit.bytesPerSecond)
            let piece: ByteBuffer
            switch source {
            case .bytes(let bytes):
                guard offset < bytes.readableBytes else { return nil }
                let count = Swift.min(size, bytes.readableBytes - offset)
                piece = bytes.slice(at: offset, length: count)
            case .file(let path):
                if file == nil { file = try RegularFile(path: path) }
                guard let file, offset < file.size else { return nil }
                piece = try file.read(at: offset, upTo: Swift.min(size, file.size - offset))
                guard piece.readableBytes > 0 else { throw IOError(syscall: "read", errno: .invalidArgument) }
            }
            offset += piece.readableBytes
            await limit.pass(piece.readableBytes)
            return piece
        }
    }
}

/// Standard input sent at `--limit-rate` (`-T -`): pieces read only when the client asks for the next one, each
/// released when the limit allows. Not replayable: standard input is read once.
final class PacedInput: Sendable {
    private let bytesPerSecond: Int64
    private let start: ContinuousClock.Instant
    /// The bytes released so far (the client asks for one piece at a time; atomic only to share the count safely).
    private let total = Atomic<Int64>(0)

    init(bytesPerSecond: Int64, now: ContinuousClock.Instant = .now) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        start = now
    }

    /// The next piece of standard input, once the average since the start is back under the limit; nil at its end.
    func next() async throws -> ByteBuffer? {
        guard let piece = try await InputChunks.next(upTo: TransferRateLimit.pieceSize(for: bytesPerSecond)) else {
            return nil
        }
        let sent = total.add(Int64(piece.readableBytes), ordering: .relaxed).newValue
        let due = start + .seconds(Double(sent) / Double(bytesPerSecond))
        if due > .now { try? await Task.sleep(until: due, clock: .continuous) }
        return piece
    }
}
