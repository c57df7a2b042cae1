import FoundationEssentials

extension FaultScenario {
    /// Parses and checks a scenario file (the format is in the README, "Fault scenarios").
    /// - Throws: `FaultScenarioError` naming the rule, the action and the field at fault.
    package static func parse(_ bytes: [UInt8]) throws(FaultScenarioError) -> FaultScenario {
        let root: Tree
        do {
            root = try JSONDecoder().decode(Tree.self, from: Data(bytes))
        } catch {
            throw FaultScenarioError(.invalidJSON, "not a JSON document: \(error)")
        }
        var object = try Fields(root, rule: nil, action: nil, name: "the scenario")
        let seed = try object.integer("seed", in: 0...Int.max) ?? 0
        let ruleTrees = try object.array("rules") ?? []
        try object.finish()
        var rules: [FaultRule] = []
        for (index, tree) in ruleTrees.enumerated() { rules.append(try parseRule(tree, index: index)) }
        return FaultScenario(seed: UInt64(seed), rules: rules)
    }

    private static func parseRule(_ tree: Tree, index: Int) throws(FaultScenarioError) -> FaultRule {
        var object = try Fields(tree, rule: index, action: nil, name: "a rule")
        let path = try object.string("path")
        if let path, !path.hasPrefix("/") && path != "*" {
            throw FaultScenarioError(.invalidValue, rule: index, field: "path", "a path starts with /, or is *")
        }
        let connection = try object.integer("connection", in: 0...Int.max)
        let request = try object.integer("request", in: 0...Int.max)
        let whenText = try object.string("when") ?? "request"
        guard let when = FaultRule.Trigger(rawValue: whenText) else {
            throw FaultScenarioError(
                .invalidValue, rule: index, field: "when", "is accept, head, body or request, not \(whenText)")
        }
        guard let actionTrees = try object.array("actions") else {
            throw FaultScenarioError(.missingField, rule: index, field: "actions", "a rule needs its actions")
        }
        try object.finish()
        if when == .accept && (path != nil || request != nil) {
            throw FaultScenarioError(
                .conflict, rule: index, field: path != nil ? "path" : "request",
                "a rule that runs on accept has no request to match")
        }
        var actions: [FaultAction] = []
        for (position, tree) in actionTrees.enumerated() {
            let action = try parseAction(tree, rule: index, action: position)
            if case .cutHandshake = action, when != .accept || position != 0 {
                throw FaultScenarioError(
                    .conflict, rule: index, action: position, field: "do",
                    "cutHandshake is the first action of a rule with \"when\": \"accept\"")
            }
            actions.append(action)
        }
        return FaultRule(path: path == "*" ? nil : path, connection: connection, request: request, when: when, actions: actions)
    }

    private static func parseAction(_ tree: Tree, rule: Int, action: Int) throws(FaultScenarioError) -> FaultAction {
        var object = try Fields(tree, rule: rule, action: action, name: "an action")
        guard let name = try object.string("do") else {
            throw FaultScenarioError(.missingField, rule: rule, action: action, field: "do", "an action names what it does")
        }
        let result: FaultAction
        switch name {
        case "delay":
            result = .delay(milliseconds: try object.requiredInteger("ms", in: 0...3_600_000))
        case "raw":
            result = .write(Array(try object.requiredString("text").utf8))
        case "status":
            let code = try object.requiredInteger("code", in: 100...999)
            let reason = try object.string("reason") ?? Self.reason(code)
            let ending = try object.lineEnding()
            result = .write(Array("HTTP/1.1 \(code) \(reason)\(ending)".utf8))
        case "field":
            let name = try object.requiredString("name")
            let value = try object.string("value") ?? ""
            let ending = try object.lineEnding()
            let folds = try object.strings("fold") ?? []
            result = .write(Array(("\(name): \(value)\(ending)" + folds.map { " \($0)\(ending)" }.joined()).utf8))
        case "endHead":
            result = .write(Array(try object.lineEnding().utf8))
        case "head":
            let code = try object.requiredInteger("status", in: 100...999)
            let reason = try object.string("reason") ?? Self.reason(code)
            let fields = try object.fieldPairs("fields") ?? []
            result = .write(Array(Self.head(code: code, reason: reason, fields: fields).utf8))
        case "response":
            let code = try object.requiredInteger("status", in: 100...999)
            let reason = try object.string("reason") ?? Self.reason(code)
            let fields = try object.fieldPairs("fields") ?? []
            let body = try object.bodyBytes(textKey: "body") ?? []
            let head = Self.head(code: code, reason: reason, fields: fields + [("Content-Length", String(body.count))])
            result = .write(Array(head.utf8) + body)
        case "body":
            guard let body = try object.bodyBytes() else {
                throw FaultScenarioError(.missingField, rule: rule, action: action, field: "text", "body needs text or size")
            }
            result = .write(body)
        case "chunk":
            let data = try object.bodyBytes() ?? []
            let sizeLine = try object.string("sizeLine") ?? String(data.count, radix: 16)
            result = .write(Array("\(sizeLine)\r\n".utf8) + data + [13, 10])
        case "lastChunk":
            result = .write(Array("0\r\n\r\n".utf8))
        case "informational":
            let count = try object.requiredInteger("count", in: 1...1_000_000)
            let code = try object.integer("status", in: 100...199) ?? 100
            let reason = try object.string("reason") ?? Self.reason(code)
            result = .write(Array(String(repeating: "HTTP/1.1 \(code) \(reason)\r\n\r\n", count: count).utf8))
        case "trickle":
            result = .trickle(
                bytes: try object.requiredInteger("bytes", in: 1...(1 << 30)),
                everyMilliseconds: try object.requiredInteger("everyMs", in: 0...3_600_000),
                random: try object.bool("random") ?? false)
        case "cutAt":
            result = .cutAt(offset: try object.requiredInteger("offset", in: 0...Int.max), ending: try object.ending())
        case "close":
            result = .close(try object.ending())
        case "endlessHead":
            result = .endlessHead(everyMilliseconds: try object.integer("everyMs", in: 1...3_600_000) ?? 10)
        case "stopReading":
            result = .stopReading
        case "hang":
            result = .hang
        case "hold":
            result = .hold
        case "release":
            result = .release
        case "cutHandshake":
            let text = try object.string("then") ?? "stall"
            guard let cut = HandshakeCut(rawValue: text) else {
                throw FaultScenarioError(
                    .invalidValue, rule: rule, action: action, field: "then", "is stall, fin or rst, not \(text)")
            }
            result = .cutHandshake(cut)
        default:
            throw FaultScenarioError(.invalidValue, rule: rule, action: action, field: "do", "no action is called \(name)")
        }
        try object.finish()
        return result
    }

    private static func head(code: Int, reason: String, fields: [(String, String)]) -> String {
        "HTTP/1.1 \(code) \(reason)\r\n" + fields.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
    }

    /// A reason phrase for the codes scenarios use most; others get `Status`.
    static func reason(_ code: Int) -> String {
        switch code {
        case 100: "Continue"
        case 102: "Processing"
        case 103: "Early Hints"
        case 200: "OK"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 404: "Not Found"
        case 413: "Content Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}

/// A JSON value as read, before the scenario's own checks.
private enum Tree: Decodable {
    case null
    case bool(Bool)
    case number(Double, exact: Int?)
    case string(String)
    case array([Tree])
    case object([String: Tree])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .number(Double(value), exact: value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value, exact: nil)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([Tree].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: Tree].self))
        }
    }

    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// The members of one object, taken one by one; `finish` refuses any left over (a misspelt field is an error).
private struct Fields {
    var members: [String: Tree]
    let rule: Int?
    let action: Int?

    init(_ tree: Tree, rule: Int?, action: Int?, name: String) throws(FaultScenarioError) {
        guard case .object(let members) = tree else {
            throw FaultScenarioError(.wrongType, rule: rule, action: action, "\(name) is an object, not \(tree.typeName)")
        }
        self.members = members
        self.rule = rule
        self.action = action
    }

    func error(_ kind: FaultScenarioError.Kind, _ field: String, _ detail: String) -> FaultScenarioError {
        FaultScenarioError(kind, rule: rule, action: action, field: field, detail)
    }

    mutating func take(_ key: String) -> Tree? {
        guard let value = members.removeValue(forKey: key) else { return nil }
        if case .null = value { return nil }
        return value
    }

    mutating func string(_ key: String) throws(FaultScenarioError) -> String? {
        guard let value = take(key) else { return nil }
        guard case .string(let text) = value else { throw error(.wrongType, key, "is a string, not \(value.typeName)") }
        return text
    }

    mutating func requiredString(_ key: String) throws(FaultScenarioError) -> String {
        guard let text = try string(key) else { throw error(.missingField, key, "is required") }
        return text
    }

    mutating func integer(_ key: String, in range: ClosedRange<Int>) throws(FaultScenarioError) -> Int? {
        guard let value = take(key) else { return nil }
        guard case .number(_, let exact) = value, let exact else {
            throw error(.wrongType, key, "is a whole number, not \(value.typeName)")
        }
        guard range.contains(exact) else {
            let upper = range.upperBound == Int.max ? "" : "\(range.upperBound)"
            throw error(.invalidValue, key, "is \(range.lowerBound)...\(upper), not \(exact)")
        }
        return exact
    }

    mutating func requiredInteger(_ key: String, in range: ClosedRange<Int>) throws(FaultScenarioError) -> Int {
        guard let value = try integer(key, in: range) else { throw error(.missingField, key, "is required") }
        return value
    }

    mutating func bool(_ key: String) throws(FaultScenarioError) -> Bool? {
        guard let value = take(key) else { return nil }
        guard case .bool(let flag) = value else { throw error(.wrongType, key, "is true or false, not \(value.typeName)") }
        return flag
    }

    mutating func array(_ key: String) throws(FaultScenarioError) -> [Tree]? {
        guard let value = take(key) else { return nil }
        guard case .array(let elements) = value else { throw error(.wrongType, key, "is an array, not \(value.typeName)") }
        return elements
    }

    mutating func strings(_ key: String) throws(FaultScenarioError) -> [String]? {
        guard let elements = try array(key) else { return nil }
        var texts: [String] = []
        for element in elements {
            guard case .string(let text) = element else {
                throw error(.wrongType, key, "is an array of strings, not of \(element.typeName)")
            }
            texts.append(text)
        }
        return texts
    }

    /// `[["Name", "value"], …]`: fields in order, repeats kept.
    mutating func fieldPairs(_ key: String) throws(FaultScenarioError) -> [(String, String)]? {
        guard let elements = try array(key) else { return nil }
        var pairs: [(String, String)] = []
        for element in elements {
            guard case .array(let pair) = element, pair.count == 2, case .string(let name) = pair[0],
                case .string(let value) = pair[1]
            else { throw error(.wrongType, key, "is an array of [name, value] string pairs") }
            pairs.append((name, value))
        }
        return pairs
    }

    /// `text` (sent as UTF-8; `body` in a `response`) or `size` (that many bytes of `abc…z` repeated), not both.
    mutating func bodyBytes(textKey: String = "text") throws(FaultScenarioError) -> [UInt8]? {
        let text = try string(textKey)
        let size = try integer("size", in: 0...(1 << 30))
        switch (text, size) {
        case (let text?, nil): return Array(text.utf8)
        case (nil, let size?): return (0..<size).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        case (nil, nil): return nil
        case (_?, _?): throw error(.conflict, "size", "give \(textKey) or size, not both")
        }
    }

    mutating func lineEnding() throws(FaultScenarioError) -> String {
        let text = try string("lineEnding") ?? "crlf"
        switch text {
        case "crlf": return "\r\n"
        case "lf": return "\n"
        default: throw error(.invalidValue, "lineEnding", "is crlf or lf, not \(text)")
        }
    }

    mutating func ending() throws(FaultScenarioError) -> FaultEnding {
        let text = try string("how") ?? "fin"
        guard let ending = FaultEnding(rawValue: text) else {
            throw error(.invalidValue, "how", "is fin, rst, rst-after-ack or fin-without-close-notify, not \(text)")
        }
        return ending
    }

    func finish() throws(FaultScenarioError) {
        guard let extra = members.keys.sorted().first else { return }
        throw error(.unknownField, extra, "is not a field here")
    }
}
