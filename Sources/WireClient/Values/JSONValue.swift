/// A parsed JSON document (what NSJSONSerialization returned as Foundation objects).
public indirect enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without fraction or exponent that fits `Int`.
    case int(Int)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; a repeated member name keeps its last value.
    case object([String: JSONValue])

    /// The member called `key` of an object, or nil.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    /// The element at `index` of an array, or nil when out of range or not an array.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { elements[index] } else { nil }
    }

    /// The value with every object member whose value is `.null` removed, recursively through objects and arrays;
    /// `.null` elements of arrays are kept (array positions carry meaning).
    public var removingKeysWithNullValues: JSONValue {
        switch self {
        case .object(let members):
            var kept: [String: JSONValue] = [:]
            kept.reserveCapacity(members.count)
            for (key, value) in members where value != .null { kept[key] = value.removingKeysWithNullValues }
            return .object(kept)
        case .array(let elements):
            return .array(elements.map(\.removingKeysWithNullValues))
        case .null, .bool, .int, .double, .string:
            return self
        }
    }
}

extension JSONValue: Codable {
    /// Decodes any JSON value; integers that fit `Int` become `.int`.
    /// - Parameter decoder: The decoder.
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyCodingKey.self) {
            var members: [String: JSONValue] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(members)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int.self) {
            self = .int(value)
        } else if let value = try? single.decode(Double.self) {
            self = .double(value)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    /// Encodes the value as itself.
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            try encoder.encodeSingle(String?.none)
        case .bool(let value):
            try encoder.encodeSingle(value)
        case .int(let value):
            try encoder.encodeSingle(value)
        case .double(let value):
            try encoder.encodeSingle(value)
        case .string(let value):
            try encoder.encodeSingle(value)
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .object(let members):
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            for (key, value) in members { try container.encode(value, forKey: AnyCodingKey(key)) }
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// Creates `.string`.
    /// - Parameter value: The text.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Creates `.int`.
    /// - Parameter value: The integer.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// Creates `.double`.
    /// - Parameter value: The number.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// Creates `.bool`.
    /// - Parameter value: The boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Creates `.null`.
    /// - Parameter nilLiteral: Nothing.
    public init(nilLiteral: ()) { self = .null }
    /// Creates `.array`.
    /// - Parameter elements: The elements.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// Creates `.object`; a repeated key keeps its last value.
    /// - Parameter elements: The members.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
