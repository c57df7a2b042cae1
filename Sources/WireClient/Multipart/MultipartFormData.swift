public import FoundationEssentials
import Synchronization
@_spi(Locking) import Wire

/// A `multipart/form-data` body built part by part (AFMultipartFormData, AFStreamingMultipartFormData), sent as a
/// stream that reads each part when its turn comes, so a file part of any size is never held in memory.
///
/// ```swift
/// let form = MultipartFormData()
/// form.appendPart(formData: Data("Ada".utf8), name: "name")
/// try form.appendPart(fileAt: "/var/tmp/photo.png", name: "photo")
/// var request = ClientRequest(url: url, method: "POST")
/// form.attach(to: &request)      // Content-Type with the boundary, exact Content-Length, the streamed body
/// ```
///
/// The layout is AFNetworking's: `--B\r\n` before the first part, `\r\n--B\r\n` before every other,
/// `\r\n--B--\r\n` after the last; `contentLength` is exact before a byte is sent. Every pass over the body starts
/// from byte 0 (`body` makes each anew), so a 307/308 redirect or a retry sends it again. A file whose size changed
/// since it was appended, or a stream part that yields another length than declared, fails the task with
/// `.bodyLengthMismatch` before the body is complete.
public final class MultipartFormData: Sendable {
    /// AFNetworking's `kAFUploadStream3GSuggestedPacketSize`: 16 KiB.
    public static let suggestedPacketSize3G = 16_384
    /// AFNetworking's `kAFUploadStream3GSuggestedDelay`: 0.2 s.
    public static let suggestedDelay3G = Duration.milliseconds(200)
    /// Alamofire's `encodingMemoryThreshold` (10 MB): forms shorter than this are encoded in memory by
    /// `SessionManager.upload(for:multipartFormData:usingThreshold:)`, longer ones written to a file first.
    public static let encodingMemoryThreshold: Int64 = 10_000_000

    /// How the body is paced: chunks of at most `packetSize` bytes, `delay` waited after each.
    struct Throttle: Sendable {
        var packetSize = Int.max
        var delay = Duration.zero
    }

    private struct State {
        var parts: [MultipartPart] = []
        var throttle = Throttle()
        /// The first part an append that cannot throw refused.
        var refusal: ClientError?
    }

    /// The boundary: `Boundary+` and 16 upper-case hex digits from the system's CSPRNG, or the one given.
    public let boundary: String
    private let clock: any Clock<Duration>
    private let state = Lock(State())

    /// An empty form.
    /// - Parameters:
    ///   - boundary: The boundary to use verbatim (tests); nil for a random one.
    ///   - clock: The clock the throttle waits on.
    public init(boundary: String? = nil, clock: any Clock<Duration> = ContinuousClock()) {
        self.boundary = boundary ?? Self.randomBoundary()
        self.clock = clock
    }

    /// `Boundary+%08X%08X` from two random 32-bit values.
    static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let hex = String(generator.next() as UInt64, radix: 16, uppercase: true)
        return "Boundary+" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    // MARK: Parts

    /// Appends the file at `path` as a part named `name`, with the file's last path component as its file name and
    /// the media type of its extension (`MIMEType.forFileName(_:)`). Its size is read now.
    /// - Parameters:
    ///   - path: A plain path, or a `file://` URL string.
    ///   - name: The part's name.
    /// - Throws: `.badURL` for a URL string other than `file://`; `.fileNotReachable` for a missing, unreadable or
    ///   non-regular file.
    public func appendPart(fileAt path: String, name: String) throws(ClientError) {
        let local = try Self.localPath(path)
        let fileName = local.split(separator: "/").last.map(String.init) ?? local
        try appendPart(fileAt: local, name: name, fileName: fileName, mimeType: MIMEType.forFileName(fileName))
    }

    /// Appends the file at `path` as a part named `name` with the given file name and media type. Its size is read
    /// now; the bytes are read when the body is sent.
    /// - Parameters:
    ///   - path: A plain path, or a `file://` URL string.
    ///   - name: The part's name.
    ///   - fileName: The `filename` parameter.
    ///   - mimeType: The part's `Content-Type`.
    /// - Throws: `.badURL` for a URL string other than `file://`; `.fileNotReachable` for a missing, unreadable or
    ///   non-regular file; `.requestSerializationFailed` when `mimeType` holds CR, LF or NUL.
    public func appendPart(fileAt path: String, name: String, fileName: String, mimeType: String) throws(ClientError) {
        let headers = try checked(Self.fileHeaders(name: name, fileName: fileName, mimeType: mimeType))
        let local = try Self.localPath(path)
        let size: Int
        do {
            size = try RegularFile(path: local).size
        } catch {
            throw ClientError(.fileNotReachable, underlying: error, failureReason: "File URL not reachable: \(local) (\(error))")
        }
        append(MultipartPart(headers: headers, source: .file(path: local, size: Int64(size))))
    }

    /// Appends a part whose body is read from a stream that `stream` makes for each pass over the body, and that
    /// must yield exactly `length` bytes.
    /// - Parameters:
    ///   - stream: Makes the stream; called once per pass (a redirect or retry calls it again).
    ///   - name: The part's name.
    ///   - fileName: The `filename` parameter.
    ///   - length: The number of bytes the stream yields.
    ///   - mimeType: The part's `Content-Type`.
    ///
    /// A `mimeType` holding CR, LF or NUL is refused: the part is not appended and `refusedPartError` says why.
    public func appendPart(
        stream: @escaping @Sendable () -> AsyncThrowingStream<Data, any Error>, name: String,
        fileName: String, length: Int64, mimeType: String
    ) {
        precondition(length >= 0, "a stream part's length cannot be negative")
        appendChecked(
            Self.fileHeaders(name: name, fileName: fileName, mimeType: mimeType), source: .stream(length: length, make: stream))
    }

    /// Appends `fileData` as a file part.
    /// - Parameters:
    ///   - fileData: The body.
    ///   - name: The part's name.
    ///   - fileName: The `filename` parameter.
    ///   - mimeType: The part's `Content-Type`.
    ///
    /// A `mimeType` holding CR, LF or NUL is refused: the part is not appended and `refusedPartError` says why.
    public func appendPart(fileData: Data, name: String, fileName: String, mimeType: String) {
        appendChecked(Self.fileHeaders(name: name, fileName: fileName, mimeType: mimeType), source: .data(fileData))
    }

    /// Appends a form field: `Content-Disposition: form-data; name="…"` and the bytes.
    /// - Parameters:
    ///   - formData: The value.
    ///   - name: The field's name.
    public func appendPart(formData: Data, name: String) {
        append(MultipartPart(headers: [MultipartPart.disposition(name: name, fileName: nil)], source: .data(formData)))
    }

    /// Appends a part with exactly these header fields, in this order, and `body`.
    /// - Parameters:
    ///   - headers: The fields (name, value).
    ///   - body: The body.
    ///
    /// A name that is not a field name (an RFC 9110 token) or a value holding CR, LF or NUL, which would end the field
    /// or the header block and inject others (AFNetworking writes them raw), is refused: the part is not appended and
    /// `refusedPartError` says why.
    public func appendPart(headers: [(String, String)], body: Data) {
        appendChecked(headers.map { (name: $0.0, value: $0.1) }, source: .data(body))
    }

    /// Why a part was refused by an append that cannot throw (the first such part), naming the part; nil when every
    /// part was taken. A refused part is never written: `upload(for:multipartFormData:)`, the request serializer's
    /// multipart requests and `writeStreamContents(to:)` fail with this error (`.requestSerializationFailed`), and
    /// `body` and `attach(to:)` leave the part out.
    public var refusedPartError: ClientError? { state.withLock { $0.refusal } }

    /// Appends a part whose headers passed `checked`, or records why it was refused.
    private func appendChecked(_ headers: [(name: String, value: String)], source: MultipartPart.Source) {
        do throws(ClientError) {
            append(MultipartPart(headers: try checked(headers), source: source))
        } catch {
            state.withLock { state in
                if state.refusal == nil { state.refusal = error }
            }
        }
    }

    /// Throws the refusal of an earlier append, if there was one.
    func checkNoPartWasRefused() throws(ClientError) {
        if let refusal = refusedPartError { throw refusal }
    }

    private func append(_ part: MultipartPart) {
        state.withLock { $0.parts.append(part) }
    }

    private static func fileHeaders(name: String, fileName: String, mimeType: String) -> [(name: String, value: String)] {
        [MultipartPart.disposition(name: name, fileName: fileName), ("Content-Type", mimeType)]
    }

    /// `headers` if every name is a token and no value holds CR, LF or NUL.
    /// - Throws: `.requestSerializationFailed` naming the part (the number it would have had, and its form name).
    private func checked(_ headers: [(name: String, value: String)]) throws(ClientError) -> [(name: String, value: String)] {
        for field in headers {
            let problem: String
            if field.name.isEmpty || !field.name.utf8.allSatisfy(MultipartPart.isTokenByte) {
                problem = "the header name \(Self.escaped(field.name)) is not a field name"
            } else if let byte = field.value.utf8.first(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
                let what = byte == 0x0D ? "a carriage return (CR)" : byte == 0x0A ? "a line feed (LF)" : "a NUL byte"
                problem = "the value of its \(field.name) field holds \(what): \(Self.escaped(field.value))"
            } else {
                continue
            }
            let index = partCount
            let formName = headers.first { $0.name.lowercased() == "content-disposition" }.flatMap {
                MultipartPart.formName(in: $0.value)
            }
            throw ClientError(
                .requestSerializationFailed,
                failureReason: "multipart part \(index + 1)"
                    + (formName.map { " (\"\($0)\")" } ?? "") + ": \(problem); the part was not added")
        }
        return headers
    }

    /// `text` quoted for a message, with control bytes as `\r`, `\n`, `\0` or `\u{…}`.
    private static func escaped(_ text: String) -> String {
        "\""
            + text.unicodeScalars.map { $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0) }
            .joined() + "\""
    }

    /// `path` as a local path: plain paths as they are, `file://` URL strings decoded, other URLs refused.
    private static func localPath(_ path: String) throws(ClientError) -> String {
        guard path.contains("://") else { return path }
        guard let url = URL(string: path), url.scheme?.lowercased() == "file", !url.path.isEmpty else {
            throw ClientError(.badURL, failureReason: "Expected URL to be a file URL: \(path)")
        }
        return url.path
    }

    // MARK: Throttling and the body

    /// Paces the body for slow links: chunks of at most `packetSize` bytes, and a wait of `delay` after each
    /// (AFNetworking's `throttleBandwidthWithPacketSize:delay:`; see `suggestedPacketSize3G`, `suggestedDelay3G`).
    /// Unthrottled by default. The wait is a timer on the form's clock, never a blocked thread.
    /// - Parameters:
    ///   - packetSize: The largest chunk, in bytes (at least 1).
    ///   - delay: The wait after each non-empty chunk.
    public func throttleBandwidth(packetSize: Int, delay: Duration) {
        precondition(packetSize > 0, "a packet holds at least one byte")
        state.withLock { $0.throttle = Throttle(packetSize: packetSize, delay: delay) }
    }

    /// Whether no part was appended (such a form is sent as an empty `application/x-www-form-urlencoded` body).
    public var isEmpty: Bool { state.withLock { $0.parts.isEmpty } }

    /// The number of parts.
    public var partCount: Int { state.withLock { $0.parts.count } }

    /// The body's exact length in bytes: every boundary, header block and body; 0 for an empty form.
    public var contentLength: Int64 {
        let parts = state.withLock { $0.parts }
        return MultipartEncoder.contentLength(boundary: boundary, parts: parts)
    }

    /// `multipart/form-data; boundary=<boundary>`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// The body of the parts appended so far, with its exact length, replayable: without throttling and stream
    /// parts, pieces of data and files (`.composite`, files sent by the kernel on plain connections); otherwise a
    /// stream whose every pass (each call of the stream factory) reads every part from its start.
    public var body: RequestBody {
        let (parts, throttle) = state.withLock { ($0.parts, $0.throttle) }
        if throttle.packetSize == .max, throttle.delay == .zero, let pieces = Self.pieces(boundary: boundary, parts: parts) {
            return .composite(pieces)
        }
        return streamedBody
    }

    /// The body as a stream read part by part (`MultipartBodyReader`), throttled if asked.
    var streamedBody: RequestBody {
        let (parts, throttle) = state.withLock { ($0.parts, $0.throttle) }
        let boundary = boundary
        let clock = clock
        return .stream(length: MultipartEncoder.contentLength(boundary: boundary, parts: parts)) {
            let reader = MultipartBodyReader(boundary: boundary, parts: parts, throttle: throttle, clock: clock)
            return AsyncThrowingStream(unfolding: { try await reader.next() })
        }
    }

    /// Sets `request`'s body to this form (AF's `requestByFinalizingMultipartFormData`): with parts, the streamed
    /// body, `Content-Type: multipart/form-data; boundary=…` and the exact `Content-Length`; without parts, the
    /// request is left as it is.
    /// - Parameter request: The request to complete.
    public func attach(to request: inout ClientRequest) {
        guard !isEmpty else { return }
        let body = body
        request.body = body
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        request.setValue(String(body.knownLength ?? 0), forHTTPHeaderField: "Content-Length")
    }
}

extension MultipartFormData {
    /// The body as pieces: the encoder's bytes merged into one piece between two files; nil when a part is a stream.
    static func pieces(boundary: String, parts: [MultipartPart]) -> [RequestBody.Piece]? {
        var encoder = MultipartEncoder(boundary: boundary, headerBlocks: parts.map(\.headerBytes))
        var pieces: [RequestBody.Piece] = []
        var pending = Data()
        while true {
            switch encoder.next() {
            case .bytes(let bytes):
                pending.append(bytes)
            case .body(let index):
                switch parts[index].source {
                case .data(let data) where data.count >= 64 * 1024:
                    // Large data goes as a piece of its own, not copied into the bytes around it.
                    if !pending.isEmpty { pieces.append(.data(pending)) }
                    pending = Data()
                    pieces.append(.data(data))
                case .data(let data):
                    pending.append(data)
                case .file(let path, let size):
                    if !pending.isEmpty { pieces.append(.data(pending)) }
                    pending = Data()
                    pieces.append(.file(path: path, size: size))
                case .stream:
                    return nil
                }
            case .finished:
                if !pending.isEmpty { pieces.append(.data(pending)) }
                return pieces
            }
        }
    }
}
