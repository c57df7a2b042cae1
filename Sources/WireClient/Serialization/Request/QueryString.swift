import FoundationEssentials
import Wire

/// `string` escaped for a query name or value: every UTF-8 byte outside `A–Z a–z 0–9 - . _ ~ / ?` becomes `%XX` with
/// upper-case hex (AFNetworking's `AFPercentEscapedStringFromString`).
///
/// So `[`, `]`, `=`, `&`, `+`, `#`, `@`, `:`, `!`, `$`, `'`, `(`, `)`, `*`, `,`, `;` and space (`%20`, never `+`) are
/// escaped, and `/` and `?` are not (RFC 3986 §3.4 lets a query hold them, so a URL can be a value). Escaping works on
/// whole UTF-8, so composed characters and emoji are never split.
/// - Parameter string: The text to escape.
/// - Returns: The escaped text (ASCII).
public func percentEscaped(_ string: String) -> String {
    PercentEncoding.encode(string, allowing: .queryComponent)
}

/// The form-style query of `parameters`, AFNetworking's default query-string serialization.
///
/// The top level must be a dictionary. Pairs come depth first: keys sorted by code point (Swift's `<`), nested names
/// `parent[key]`, array elements `parent[]` in order, empty containers nothing; `.null` writes the name alone (no
/// `=`), booleans `1`/`0`, integral doubles without `.0`. Names and values are escaped with `percentEscaped(_:)`, pairs
/// joined by `&`.
/// - Parameter parameters: A `.dictionary`.
/// - Returns: The query, without `?`.
/// - Throws: `.requestSerializationFailed` for a top level other than a dictionary, or for `.data` anywhere (bytes
///   belong in multipart bodies).
public func queryString(from parameters: Parameters) throws(ClientError) -> String {
    let pairs = try QueryPairs.pairs(from: parameters).map { pair throws(ClientError) -> (name: String, value: String?) in
        switch pair.value {
        case .text(let text): return (pair.name, text)
        case .null: return (pair.name, nil)
        case .data:
            throw ClientError(
                .requestSerializationFailed,
                failureReason: "Data parameter '\(pair.name)' cannot be written in a query; use a multipart body.")
        }
    }
    return PercentEncoding.formQuery(pairs)
}

/// The depth-first name/value walk shared by the query string and the parameter parts of multipart bodies.
enum QueryPairs {
    /// A leaf of the walk.
    enum Value: Equatable {
        /// A string, number or boolean, as text.
        case text(String)
        /// `.null`: the name alone.
        case null
        /// Raw bytes (multipart parts only).
        case data(Data)
    }

    /// The pairs of `parameters`, whose top level must be a dictionary.
    static func pairs(from parameters: Parameters) throws(ClientError) -> [(name: String, value: Value)] {
        guard case .dictionary = parameters else {
            throw ClientError(
                .requestSerializationFailed, failureReason: "Form and query parameters must be a dictionary at the top level.")
        }
        var pairs: [(name: String, value: Value)] = []
        walk(parameters, name: nil, into: &pairs)
        return pairs
    }

    private static func walk(_ value: ParameterValue, name: String?, into pairs: inout [(name: String, value: Value)]) {
        switch value {
        case .dictionary(let members):
            for key in members.keys.sorted() {
                guard let member = members[key] else { continue }
                walk(member, name: name.map { "\($0)[\(key)]" } ?? key, into: &pairs)
            }
        case .array(let elements):
            let elementName = "\(name ?? "")[]"
            for element in elements { walk(element, name: elementName, into: &pairs) }
        case .null:
            pairs.append((name ?? "", .null))
        case .data(let data):
            pairs.append((name ?? "", .data(data)))
        case .string(let text):
            pairs.append((name ?? "", .text(text)))
        case .int(let number):
            pairs.append((name ?? "", .text(String(number))))
        case .double(let number):
            pairs.append((name ?? "", .text(NumberText.text(number))))
        case .bool(let flag):
            pairs.append((name ?? "", .text(flag ? "1" : "0")))
        }
    }
}

/// Numbers as NSNumber's `description` writes them.
enum NumberText {
    /// The shortest text that reads back as `number`, with integral values within ±2^53 written without `.0`.
    static func text(_ number: Double) -> String {
        if number.isFinite, number == number.rounded(), abs(number) <= 9_007_199_254_740_992 {
            // Exact: every integer of this magnitude is an Int64. NSNumber keeps the sign of zero.
            return number == 0 && number.sign == .minus ? "-0" : String(Int64(number))
        }
        return number.description
    }
}
