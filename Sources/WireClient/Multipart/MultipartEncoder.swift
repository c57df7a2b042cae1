import FoundationEssentials

/// The order of a multipart body's pieces as a value (AFNetworking's four phases per part): events in (`next()`),
/// steps out, no I/O. The shell (`MultipartBodyReader`) turns the steps into bytes.
///
/// For part *i* of *n*: the boundary (`--B\r\n` for the first part, `\r\n--B\r\n` for the others: the CRLF that ends
/// the previous body belongs to the boundary), the header block, the body, and after the last body only
/// `\r\n--B--\r\n`.
struct MultipartEncoder: Sendable {
    /// Where the encoder is within a part.
    enum Phase: Sendable, Hashable {
        /// Next: the part's boundary.
        case boundary
        /// Next: the part's header block.
        case headers
        /// Next: the part's body.
        case body
        /// Next: the final boundary if this is the last part, else the next part's boundary.
        case finalBoundary
        /// Every byte has been stepped through.
        case finished
    }

    /// What the shell does next.
    enum Step: Sendable, Equatable {
        /// Send these bytes (a boundary or a header block).
        case bytes(Data)
        /// Send the body of part `index`.
        case body(index: Int)
        /// The body is complete.
        case finished
    }

    let boundary: String
    let headerBlocks: [Data]
    private(set) var index = 0
    private(set) var phase: Phase

    /// An encoder at the start of the body of parts whose header blocks are `headerBlocks`.
    init(boundary: String, headerBlocks: [Data]) {
        self.boundary = boundary
        self.headerBlocks = headerBlocks
        phase = headerBlocks.isEmpty ? .finished : .boundary
    }

    /// The next step, moving the encoder past it.
    mutating func next() -> Step {
        switch phase {
        case .boundary:
            phase = .headers
            return .bytes(Self.boundaryBytes(boundary, first: index == 0))
        case .headers:
            phase = .body
            return .bytes(headerBlocks[index])
        case .body:
            phase = .finalBoundary
            return .body(index: index)
        case .finalBoundary:
            if index + 1 < headerBlocks.count {
                index += 1
                phase = .headers
                return .bytes(Self.boundaryBytes(boundary, first: false))
            }
            phase = .finished
            return .bytes(Self.finalBoundaryBytes(boundary))
        case .finished:
            return .finished
        }
    }

    /// `--B\r\n` before the first part, `\r\n--B\r\n` before any other.
    static func boundaryBytes(_ boundary: String, first: Bool) -> Data {
        Data(((first ? "" : "\r\n") + "--\(boundary)\r\n").utf8)
    }

    /// `\r\n--B--\r\n`, after the last part's body.
    static func finalBoundaryBytes(_ boundary: String) -> Data {
        Data("\r\n--\(boundary)--\r\n".utf8)
    }

    /// The exact length of the body of `parts` with `boundary`: every boundary, header block and body, and the
    /// final boundary; 0 without parts.
    static func contentLength(boundary: String, parts: [MultipartPart]) -> Int64 {
        guard !parts.isEmpty else { return 0 }
        var total = Int64(finalBoundaryBytes(boundary).count)
        for (position, part) in parts.enumerated() {
            total += Int64(boundaryBytes(boundary, first: position == 0).count)
            total += Int64(part.headerBytes.count) + part.bodyLength
        }
        return total
    }
}
