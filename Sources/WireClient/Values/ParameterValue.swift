import FoundationEssentials

/// Request parameters: the values AFNetworking took as `NSDictionary`/`NSArray`/`NSNumber`/`NSString`/`NSNull`/`NSData`.
///
/// Expressible by every literal, so `["q": "swift", "page": 2, "tags": ["a", "b"], "draft": nil]` is a value.
public indirect enum ParameterValue: Sendable, Hashable {
    /// Text.
    case string(String)
    /// An integer.
    case int(Int)
    /// A floating-point number.
    case double(Double)
    /// A boolean (`1`/`0` in a query, `true`/`false` in JSON).
    case bool(Bool)
    /// No value (`NSNull`): the bare name in a query, `null` in JSON; not allowed in a property list.
    case null
    /// Raw bytes: only a multipart part or a property list can carry them.
    case data(Data)
    /// An ordered list.
    case array([ParameterValue])
    /// Named values (their order never matters: encoders sort the keys).
    case dictionary([String: ParameterValue])
}

/// Parameters of a request: a `ParameterValue`, a dictionary for form and query encoding.
public typealias Parameters = ParameterValue

extension ParameterValue: ExpressibleByStringLiteral {
    /// Creates `.string`.
    /// - Parameter value: The text.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension ParameterValue: ExpressibleByIntegerLiteral {
    /// Creates `.int`.
    /// - Parameter value: The integer.
    public init(integerLiteral value: Int) { self = .int(value) }
}

extension ParameterValue: ExpressibleByFloatLiteral {
    /// Creates `.double`.
    /// - Parameter value: The number.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension ParameterValue: ExpressibleByBooleanLiteral {
    /// Creates `.bool`.
    /// - Parameter value: The boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension ParameterValue: ExpressibleByNilLiteral {
    /// Creates `.null`.
    /// - Parameter nilLiteral: Nothing.
    public init(nilLiteral: ()) { self = .null }
}

extension ParameterValue: ExpressibleByArrayLiteral {
    /// Creates `.array`.
    /// - Parameter elements: The elements, in order.
    public init(arrayLiteral elements: ParameterValue...) { self = .array(elements) }
}

extension ParameterValue: ExpressibleByDictionaryLiteral {
    /// Creates `.dictionary`; a repeated key keeps its last value.
    /// - Parameter elements: The pairs.
    public init(dictionaryLiteral elements: (String, ParameterValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension ParameterValue: Encodable {
    /// Encodes the value as itself (`.data` as the encoder encodes `Data`, `.null` as nil).
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .string(let value):
            try encoder.encodeSingle(value)
        case .int(let value):
            try encoder.encodeSingle(value)
        case .double(let value):
            try encoder.encodeSingle(value)
        case .bool(let value):
            try encoder.encodeSingle(value)
        case .null:
            try encoder.encodeSingle(String?.none)
        case .data(let value):
            try encoder.encodeSingle(value)
        case .array(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(value) }
        case .dictionary(let values):
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            for (key, value) in values { try container.encode(value, forKey: AnyCodingKey(key)) }
        }
    }
}

extension Encoder {
    /// Encodes `value` alone in a single-value container, nil as null: the leaf cases of `ParameterValue`'s and
    /// `JSONValue`'s encoding.
    func encodeSingle(_ value: (some Encodable)?) throws {
        var container = singleValueContainer()
        if let value { try container.encode(value) } else { try container.encodeNil() }
    }
}

/// A coding key made from any string: the keys of `ParameterValue` and `JSONValue` dictionaries.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }

    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { stringValue = String(intValue) }
}
