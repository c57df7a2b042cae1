import FoundationEssentials

/// An XML document as received: its bytes, unparsed (the toolchain has no XML parser in FoundationEssentials, and
/// AFXMLParserResponseSerializer likewise returned an unparsed `NSXMLParser`). Hand `data` to the parser of your choice.
public struct XMLData: Sendable, Hashable {
    /// The document's bytes.
    public var data: Data

    /// Wraps a document's bytes.
    /// - Parameter data: The bytes.
    public init(data: Data) {
        self.data = data
    }
}
