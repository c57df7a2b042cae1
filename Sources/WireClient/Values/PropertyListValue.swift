import FoundationEssentials

/// A parsed property list (what NSPropertyListSerialization returned as Foundation objects).
public indirect enum PropertyListValue: Sendable, Hashable {
    /// `<string>`.
    case string(String)
    /// `<integer>`.
    case int(Int)
    /// `<real>`.
    case double(Double)
    /// `<true/>` or `<false/>`.
    case bool(Bool)
    /// `<date>`.
    case date(Date)
    /// `<data>`.
    case data(Data)
    /// `<array>`.
    case array([PropertyListValue])
    /// `<dict>`.
    case dictionary([String: PropertyListValue])
}

extension PropertyListValue: Decodable {
    /// Decodes any property-list value (from `PropertyListDecoder`, XML or binary).
    /// - Parameter decoder: The decoder.
    public init(from decoder: any Decoder) throws {
        if let members = try? decoder.container(keyedBy: AnyCodingKey.self) {
            var dictionary: [String: PropertyListValue] = [:]
            for key in members.allKeys { dictionary[key.stringValue] = try members.decode(PropertyListValue.self, forKey: key) }
            self = .dictionary(dictionary)
            return
        }
        if var elements = try? decoder.unkeyedContainer() {
            var array: [PropertyListValue] = []
            while !elements.isAtEnd { array.append(try elements.decode(PropertyListValue.self)) }
            self = .array(array)
            return
        }
        let single = try decoder.singleValueContainer()
        if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int.self) {
            self = .int(value)
        } else if let value = try? single.decode(Double.self) {
            self = .double(value)
        } else if let value = try? single.decode(Date.self) {
            self = .date(value)
        } else if let value = try? single.decode(Data.self) {
            self = .data(value)
        } else {
            self = .string(try single.decode(String.self))
        }
    }
}
