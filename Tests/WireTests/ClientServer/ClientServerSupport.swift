import Foundation
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireTestSupport

/// Wire's client talking to Wire's server in one process, over 127.0.0.1 with an ephemeral port.
///
/// Both run on one group of two loops: the server listens on both (`SO_REUSEPORT`), the client's
/// connections land on either, so a request and its answer often cross loops, as they would
/// between two processes, yet a single group keeps thread and descriptor counts small.
struct ClientServer: Sendable {
    let group: EventLoopGroup
    let server: HTTPServer
    let client: HTTPClient
    let port: Int

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Starts a server with `handler` and a client on a shared group, runs `body` under a
    /// timeout, then shuts everything down and checks that no descriptor stayed open.
    ///
    /// The baseline is taken before the group exists and compared after the group is gone, so
    /// the count covers both sides: the server's listeners and accepted sockets, the client's
    /// pooled sockets, and the loops' epoll and eventfd descriptors.
    static func run(
        seconds: Double = 60,
        client clientConfiguration: HTTPClientConfiguration = HTTPClientConfiguration(),
        configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        handler: @escaping @Sendable (HTTPServerRequest, HTTPResponseWriter) async throws -> Void,
        _ body: @escaping @Sendable (ClientServer) async throws -> Void
    ) async throws {
        var serverConfiguration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
        configure(&serverConfiguration)
        let configuration = serverConfiguration
        // The descriptor comparison is process-wide: no other I/O test may run meanwhile.
        try await withExclusiveIO {
            let before = await descriptorBaseline()
            let group = try EventLoopGroup(loopCount: 2, namePrefix: "client-server")
            let server = HTTPServer(configuration: configuration, group: group, handler: handler)
            let outcome: Result<Void, any Error>
            do {
                let address = try await server.start()
                let client = try HTTPClient(configuration: clientConfiguration, group: group)
                let pair = ClientServer(group: group, server: server, client: client, port: address.port!)
                do {
                    try await withTimeout(seconds: seconds) { try await body(pair) }
                    outcome = .success(())
                } catch {
                    outcome = .failure(error)
                }
                await client.shutdown()
            } catch {
                await group.shutdownGracefully()
                throw error
            }
            await server.shutdown(gracePeriod: .seconds(2))
            await group.shutdownGracefully()
            #expect(await before.newlyOpenedOnceSettled() == [], "descriptors leaked (client or server side)")
            try outcome.get()
        }
    }
}

// MARK: - Checksums and patterns

/// FNV-1a over 64 bits: order-sensitive, so a reordered or dropped byte changes it. Used for
/// bodies up to a few MiB, where a byte loop costs milliseconds even in a debug build.
struct Checksum: Sendable, Hashable {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
    private(set) var count = 0

    mutating func add(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { bytes in
            var hash = value
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            value = hash
        }
        count += buffer.readableBytes
    }

    static func of(_ buffer: ByteBuffer) -> Checksum {
        var checksum = Checksum()
        checksum.add(buffer)
        return checksum
    }

    /// `"<count>:<hex>"`, as the echo handler reports it.
    var text: String { "\(count):\(String(value, radix: 16))" }
}

/// A body of any length made of 64 KiB blocks generated on demand, so a 1 GiB transfer never
/// holds more than the block being sent.
///
/// Block `k` is one fixed pseudo-random 64 KiB block with `k` stamped (little-endian) into its
/// first 8 bytes: a lost, duplicated or reordered block shows up as a wrong stamp, a corrupted
/// byte as a mismatch against the fixed block.
///
/// The receiver checks every byte exactly with `memcmp` rather than hashing it: a byte-wise hash
/// runs at roughly 100 MB/s in a debug build and would measure the test, not the transfer,
/// while `memcmp` is glibc's vectorised code in every build.
enum Pattern {
    static let blockSize = 64 * 1024

    /// The fixed block (xorshift64, so no run of it repeats a short period).
    static let block: [UInt8] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return [UInt8](unsafeUninitializedCapacity: blockSize) { buffer, initialized in
            for index in 0..<blockSize {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                buffer[index] = UInt8(truncatingIfNeeded: state)
            }
            initialized = blockSize
        }
    }()

    /// Block `index`, cut to `length` bytes (the last block of a body may be short).
    static func chunk(_ index: Int, length: Int = blockSize) -> ByteBuffer {
        var bytes = block  // one 64 KiB copy-on-write copy, a memcpy
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: UInt64(index).littleEndian, toByteOffset: 0, as: UInt64.self) }
        if length < blockSize { bytes.removeLast(blockSize - length) }
        return ByteBuffer(bytes: bytes)
    }

    /// The chunks of a `total`-byte body, generated as they are pulled: the stream buffers
    /// nothing (an `AsyncThrowingStream` fed by a producer task would buffer the whole body
    /// ahead of a slow socket).
    static func stream(total: Int) -> AsyncThrowingStream<ByteBuffer, any Error> {
        let next = Atomic<Int>(0)
        return AsyncThrowingStream(unfolding: {
            let index = next.add(1, ordering: .relaxed).oldValue
            let offset = index * blockSize
            guard offset < total else { return nil }
            return chunk(index, length: min(blockSize, total - offset))
        })
    }

    /// Checks a body against the pattern as it arrives, chunk boundaries wherever the network
    /// put them.
    struct Verifier: Sendable {
        /// Bytes checked so far.
        private(set) var offset = 0
        /// The offset of the first byte that differed from the pattern, if any.
        private(set) var firstMismatch: Int?

        mutating func check(_ buffer: ByteBuffer) {
            buffer.withUnsafeReadableBytes { bytes in
                var position = 0
                while position < bytes.count {
                    let blockIndex = offset / blockSize
                    let within = offset % blockSize
                    let length = min(bytes.count - position, blockSize - within)
                    if firstMismatch == nil,
                        let bad = Self.mismatch(bytes, from: position, length: length, block: blockIndex, within: within)
                    {
                        firstMismatch = offset + bad
                    }
                    position += length
                    offset += length
                }
            }
        }

        /// Compares `length` received bytes against block `block` from `within`: the stamp
        /// bytes one by one, the rest with `memcmp`. Returns the mismatch's offset in the run.
        private static func mismatch(
            _ bytes: UnsafeRawBufferPointer, from position: Int, length: Int,
            block: Int, within: Int
        ) -> Int? {
            var checked = 0
            while within + checked < 8 && checked < length {
                let expected = UInt8(truncatingIfNeeded: UInt64(block) >> (8 * UInt64(within + checked)))
                if bytes[position + checked] != expected { return checked }
                checked += 1
            }
            guard checked < length else { return nil }
            let equal = Pattern.block.withUnsafeBytes { pattern in
                memcmp(bytes.baseAddress! + position + checked, pattern.baseAddress! + within + checked, length - checked) == 0
            }
            return equal ? nil : checked  // the block start of the run is precise enough for a report
        }
    }
}

// MARK: - Memory

/// The process's resident memory from `/proc/self/status`, in bytes.
struct ResidentMemory: Sendable {
    /// `VmRSS`: resident now.
    var current: Int
    /// `VmHWM`: the peak resident size (since start, or since `resetPeak()`).
    var peak: Int

    static func read() -> ResidentMemory {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
                let digits = line.dropFirst(name.count + 1).filter(\.isNumber)
                return (Int(String(digits)) ?? 0) * 1024  // the kernel reports kB
            }
            return 0
        }
        return ResidentMemory(current: field("VmRSS"), peak: field("VmHWM"))
    }

    /// Resets `VmHWM` to the current RSS (writing 5 to `/proc/self/clear_refs`, Linux 4.0+), so
    /// the peak after a transfer is the transfer's peak, not an earlier test's. False if the
    /// kernel or sandbox refuses; the caller then relies on its own samples.
    @discardableResult
    static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }
}

/// The peak RSS seen while something runs: the consumer samples it every few MiB, which catches
/// a buffer that grows and is freed again before the end (where `VmRSS` alone would miss it).
final class MemoryWatch: Sendable {
    let start: ResidentMemory
    let peakResetWorked: Bool
    private let sampledPeak = Atomic<Int>(0)

    init() {
        peakResetWorked = ResidentMemory.resetPeak()
        start = ResidentMemory.read()
        sampledPeak.store(start.current, ordering: .relaxed)
    }

    func sample() {
        sampledPeak.max(ResidentMemory.read().current, ordering: .relaxed)
    }

    /// The largest growth over the starting RSS: from `VmHWM` when it could be reset (it
    /// sees every page ever touched), else from the samples.
    func growth() -> Int {
        sample()
        let end = ResidentMemory.read()
        let peak = peakResetWorked ? max(end.peak, sampledPeak.load(ordering: .relaxed)) : sampledPeak.load(ordering: .relaxed)
        return peak - start.current
    }

    /// Growth of the current RSS only (what stays allocated after the transfer).
    func residualGrowth() -> Int { ResidentMemory.read().current - start.current }
}

// MARK: - Small shared state

/// A value handlers and tests share across loops and tasks.
final class Shared<Value: Sendable>: Sendable {
    private let state: Lock<Value>
    init(_ value: Value) { state = Lock(value) }
    var value: Value { state.withLock { $0 } }
    func update<R: Sendable>(_ body: (inout Value) -> R) -> R { state.withLock { body(&$0) } }
}

/// Megabytes (10^6) per second, for the report.
func megabytesPerSecond(_ bytes: Int, _ elapsed: Duration) -> Double {
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return seconds > 0 ? Double(bytes) / 1e6 / seconds : 0
}

func mebibytes(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

/// The kernel's ceiling for one TCP socket's send plus receive buffer (`tcp_wmem[2]` +
/// `tcp_rmem[2]`): bytes a server can have written that the client has not read, with no user
/// space involved. Back-pressure bounds are this plus Wire's own watermarks.
func kernelSocketBufferCeiling() -> Int {
    func maximum(_ path: String) -> Int {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) } ?? 8 << 20
    }
    return maximum("/proc/sys/net/ipv4/tcp_wmem") + maximum("/proc/sys/net/ipv4/tcp_rmem")
}
