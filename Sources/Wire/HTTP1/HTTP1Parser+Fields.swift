/// The one copy of a head's field section into `HTTPHeaders`, unfolding obs-fold where a lenient parse repaired it.
extension HTTP1Parser {
    /// Copies the field section once into compact `HTTPHeaders` storage: one byte array, one index array.
    func makeHeaders(_ bytes: UnsafeBufferPointer<UInt8>) -> HTTPHeaders {
        let fields = scanner.fields
        let fieldCount = fields.count
        guard let first = fields.first, let last = fields.last else { return HTTPHeaders() }
        let base = first.nameStart
        let end = last.valueStart + last.valueLength
        if scanner.needsUnfolding { return makeUnfoldedHeaders(bytes) }
        let storage = Array(UnsafeBufferPointer(rebasing: bytes[base..<end]))
        // Filled on the stack and copied once: `Array(unsafeUninitializedCapacity:)` reaches the runtime's generic
        // metadata lookup on every call (several hundred instructions a request, callgrind showed).
        let index = withUnsafeTemporaryAllocation(of: UInt32.self, capacity: fieldCount * 4) { buffer in
            for entry in 0..<fieldCount {
                let span = fields[entry]
                let field = entry * 4
                buffer[field] = UInt32(truncatingIfNeeded: span.nameStart - base)
                buffer[field + 1] = UInt32(truncatingIfNeeded: span.nameLength)
                buffer[field + 2] = UInt32(truncatingIfNeeded: span.valueStart - base)
                buffer[field + 3] = UInt32(truncatingIfNeeded: span.valueLength)
            }
            return Array(UnsafeBufferPointer(buffer))
        }
        return HTTPHeaders(storage: storage, index: index)
    }

    /// `makeHeaders` for a section with obs-fold (only a lenient parser gets here): each fold, `OWS CRLF RWS`, becomes
    /// one SP in the value handed on (RFC 9112 §5.2), so the fields are copied one by one into fresh storage.
    private func makeUnfoldedHeaders(_ bytes: UnsafeBufferPointer<UInt8>) -> HTTPHeaders {
        let fields = scanner.fields
        var storage: [UInt8] = []
        var index: [UInt32] = []
        index.reserveCapacity(fields.count * 4)
        for span in fields {
            let nameStart = storage.count
            storage.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[span.nameStart..<span.nameStart + span.nameLength]))
            storage.append(contentsOf: ": ".utf8)
            let valueStart = storage.count
            var offset = span.valueStart
            let valueEnd = offset + span.valueLength
            while offset < valueEnd {
                let byte = bytes[offset]
                offset += 1
                guard byte == ASCII.cr || byte == ASCII.lf else {
                    storage.append(byte)
                    continue
                }
                // The OWS before the CRLF was already copied: take it back, then skip the CRLF and the RWS.
                while storage.count > valueStart, storage.last == ASCII.space || storage.last == ASCII.tab {
                    storage.removeLast()
                }
                while offset < valueEnd,
                    bytes[offset] == ASCII.cr || bytes[offset] == ASCII.lf || bytes[offset] == ASCII.space
                        || bytes[offset] == ASCII.tab
                {
                    offset += 1
                }
                storage.append(ASCII.space)
            }
            index.append(UInt32(truncatingIfNeeded: nameStart))
            index.append(UInt32(truncatingIfNeeded: span.nameLength))
            index.append(UInt32(truncatingIfNeeded: valueStart))
            index.append(UInt32(truncatingIfNeeded: storage.count - valueStart))
        }
        return HTTPHeaders(storage: storage, index: index)
    }
}
