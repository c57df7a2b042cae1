import FoundationEssentials
import Wire

extension Data {
    /// Appends the readable bytes of `buffer` with one copy (through its span, no intermediate array).
    mutating func append(_ buffer: ByteBuffer) {
        buffer.withReadableSpan { span in span.withUnsafeBufferPointer { append($0) } }
    }
}
