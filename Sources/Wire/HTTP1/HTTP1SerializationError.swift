/// Why the serializer refused to write a message: it would have produced bytes a peer could parse differently.
public struct HTTP1SerializationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of fault.
    public var kind: Kind
    /// The offending text, for diagnostics.
    public var detail: String

    /// Creates an error.
    /// - Parameters:
    ///   - kind: The class of fault.
    ///   - detail: The offending text.
    public init(_ kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// `name: detail`.
    public var description: String { "\(kind.name): \(detail)" }

    /// A class of serialization fault. Compare with the static members.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable, Hashable {
            case invalidMethod = "invalid_method"
            case invalidTarget = "invalid_target"
            case invalidFieldName = "invalid_field_name"
            case invalidFieldValue = "invalid_field_value"
            case invalidReasonPhrase = "invalid_reason_phrase"
            case invalidStatusCode = "invalid_status_code"
            case invalidVersion = "invalid_version"
            case invalidChunkExtension = "invalid_chunk_extension"
        }

        private let code: Code

        private init(_ code: Code) {
            self.code = code
        }

        /// The stable snake_case name.
        public var name: String { code.rawValue }

        /// The stable name.
        public var description: String { code.rawValue }

        /// The method is empty or not a token.
        public static let invalidMethod = Kind(.invalidMethod)
        /// The target is empty or holds whitespace or control bytes.
        public static let invalidTarget = Kind(.invalidTarget)
        /// A field name is empty or not a token.
        public static let invalidFieldName = Kind(.invalidFieldName)
        /// A field value holds CR, LF, NUL or another control byte other than HTAB.
        public static let invalidFieldValue = Kind(.invalidFieldValue)
        /// The reason phrase holds a control byte other than HTAB.
        public static let invalidReasonPhrase = Kind(.invalidReasonPhrase)
        /// The status code is outside 100...999.
        public static let invalidStatusCode = Kind(.invalidStatusCode)
        /// The version digits are not single digits.
        public static let invalidVersion = Kind(.invalidVersion)
        /// A chunk extension is not `;name[=value]` syntax.
        public static let invalidChunkExtension = Kind(.invalidChunkExtension)
    }
}
