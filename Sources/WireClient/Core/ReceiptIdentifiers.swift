public import FoundationEssentials
import Synchronization

/// Identifiers for receipts and downloads: unique within the process and made without a system call.
///
/// `UUID()` opens and reads `/dev/urandom` on every call (2–3 µs), several times the cost of answering a request
/// from the memory cache. These are version-4-shaped UUIDs whose first nine bytes are random once per process and
/// whose last seven count up, so no two made in one process are equal (2^56 of them). They identify; they are not
/// secrets.
@usableFromInline
enum ReceiptIdentifiers {
    private static let base: uuid_t = UUID().uuid
    private static let counter = Atomic<UInt64>(0)

    /// The next identifier.
    @usableFromInline
    static func next() -> UUID {
        let count = counter.add(1, ordering: .relaxed).newValue
        var bytes = base
        bytes.6 = bytes.6 & 0x0F | 0x40
        bytes.8 = bytes.8 & 0x3F | 0x80
        bytes.9 = UInt8(truncatingIfNeeded: count >> 48)
        bytes.10 = UInt8(truncatingIfNeeded: count >> 40)
        bytes.11 = UInt8(truncatingIfNeeded: count >> 32)
        bytes.12 = UInt8(truncatingIfNeeded: count >> 24)
        bytes.13 = UInt8(truncatingIfNeeded: count >> 16)
        bytes.14 = UInt8(truncatingIfNeeded: count >> 8)
        bytes.15 = UInt8(truncatingIfNeeded: count)
        return UUID(uuid: bytes)
    }
}
