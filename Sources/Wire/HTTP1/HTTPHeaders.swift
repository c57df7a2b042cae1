/// An ordered list of HTTP fields (RFC 9110 §5), names and values kept exactly as sent.
///
/// Storage is one contiguous byte array plus one index array holding four `UInt32`s per field (name start, name
/// length, value start, value length). A parsed header section therefore costs two allocations however many fields
/// it has, and values can be read as bytes without creating a `String`. Lookups by name are ASCII case-insensitive
/// (RFC 9110 §5.1); order and duplicates are preserved because field order can be significant (RFC 9110 §5.3).
public struct HTTPHeaders: Sendable, RandomAccessCollection, ExpressibleByDictionaryLiteral, Hashable,
    CustomStringConvertible
{
    /// A field as a name/value pair of strings.
    public typealias Element = (name: String, value: String)
    /// Positions are field numbers, in wire order.
    public typealias Index = Int

    /// Names and values, referenced by `index`. Unreferenced bytes may remain after removals.
    private(set) var bytes: [UInt8]
    /// Four entries per field: nameStart, nameLength, valueStart, valueLength, all offsets into `bytes`.
    private(set) var index: [UInt32]
    /// Whether every field is known to be safe on the wire (a token name, a value of field-vchars, SP and HTAB), so
    /// the serializer need not check again: fields added one by one are checked as they come, and a server's fixed
    /// response is then checked once, not per request. Parsed fields are left to the serializer. Not part of
    /// equality.
    package private(set) var isKnownValid = true

    /// Creates an empty list.
    public init() {
        bytes = []
        index = []
    }

    /// Creates a list from name/value pairs, in order.
    /// - Parameter fields: The fields to add.
    public init(_ fields: [(name: String, value: String)]) {
        self.init()
        for field in fields {
            add(name: field.name, value: field.value)
        }
    }

    /// Creates a list from a dictionary literal, keeping the literal's order.
    /// - Parameter elements: The name/value pairs.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init()
        for (name, value) in elements {
            add(name: name, value: value)
        }
    }

    /// Adopts storage built by the parser: the byte copy of a header section and its field index.
    init(storage bytes: [UInt8], index: [UInt32]) {
        self.bytes = bytes
        self.index = index
        isKnownValid = false
    }

    /// The first field position.
    public var startIndex: Int { 0 }
    /// One past the last field position.
    public var endIndex: Int { index.count / 4 }

    /// The field at `position`, decoded as strings (invalid UTF-8 is repaired with U+FFFD).
    /// - Parameter position: A valid field position.
    public subscript(position: Int) -> (name: String, value: String) {
        (name(at: position), value(at: position))
    }

    /// All values of the fields called `name`, in order; empty when there is none.
    /// - Parameter name: The field name, matched case-insensitively.
    public subscript(name: String) -> [String] {
        var values: [String] = []
        forEachPosition(named: name) { values.append(value(at: $0)) }
        return values
    }

    /// The value of the first field called `name`.
    /// - Parameter name: The field name, matched case-insensitively.
    /// - Returns: The value, or `nil` if no field has that name.
    public func first(name: String) -> String? {
        firstPosition(named: name).map { value(at: $0) }
    }

    /// Whether some field is called `name`.
    /// - Parameter name: The field name, matched case-insensitively.
    public func contains(name: String) -> Bool {
        firstPosition(named: name) != nil
    }

    /// The name of the field at `position`, as sent.
    /// - Parameter position: A valid field position.
    public func name(at position: Int) -> String {
        String(decoding: bytes[nameRange(at: position)], as: UTF8.self)
    }

    /// The value of the field at `position`, without surrounding whitespace.
    /// - Parameter position: A valid field position.
    public func value(at position: Int) -> String {
        String(decoding: bytes[valueRange(at: position)], as: UTF8.self)
    }

    /// Calls `body` with the name bytes of the field at `position`; no copy, no `String`.
    /// - Parameters:
    ///   - position: A valid field position.
    ///   - body: Receives the bytes; they must not escape.
    /// - Throws: Whatever `body` throws.
    public func withNameBytes<Result, Failure: Error>(
        at position: Int,
        _ body: (Span<UInt8>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(bytes.span.extracting(nameRange(at: position)))
    }

    /// Calls `body` with the value bytes of the field at `position`; no copy, no `String`.
    /// - Parameters:
    ///   - position: A valid field position.
    ///   - body: Receives the bytes; they must not escape.
    /// - Throws: Whatever `body` throws.
    public func withValueBytes<Result, Failure: Error>(
        at position: Int,
        _ body: (Span<UInt8>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(bytes.span.extracting(valueRange(at: position)))
    }

    /// Calls `body` with the value bytes of the first field called `name`.
    /// - Parameters:
    ///   - name: The field name, matched case-insensitively.
    ///   - body: Receives the bytes; they must not escape.
    /// - Returns: What `body` returns, or `nil` if no field has that name.
    /// - Throws: Whatever `body` throws.
    public func withFirstValueBytes<Result, Failure: Error>(
        name: String,
        _ body: (Span<UInt8>) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        guard let position = firstPosition(named: name) else { return nil }
        return try withValueBytes(at: position, body)
    }

    /// Whether any field called `name` lists `token` as a comma-separated element, compared case-insensitively.
    ///
    /// This is how `Connection: keep-alive, Close` is read (RFC 9110 §7.6.1, §5.6.1).
    /// - Parameters:
    ///   - token: The element to look for.
    ///   - name: The field name, matched case-insensitively.
    public func containsToken(_ token: String, inFieldsNamed name: String) -> Bool {
        // No fields (most requests a client makes): nothing to look for, and no string to lend its bytes.
        guard !index.isEmpty else { return false }
        var token = token
        var name = name
        return token.withUTF8 { tokenBytes in
            name.withUTF8 { nameBytes in containsToken(tokenBytes, inFieldsNamed: nameBytes) }
        }
    }

    /// `containsToken(_:inFieldsNamed:)` for literals, with no string to bridge: the server asks it of every
    /// request and response.
    func containsToken(literal token: StaticString, inFieldsNamed name: StaticString) -> Bool {
        containsToken(
            UnsafeBufferPointer(start: token.utf8Start, count: token.utf8CodeUnitCount),
            inFieldsNamed: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    /// Whether a field named `name` exists, for a literal name.
    func contains(literalName name: StaticString) -> Bool {
        var found = false
        forEachPosition(named: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)) { _ in
            found = true
        }
        return found
    }

    private func containsToken(
        _ tokenBytes: UnsafeBufferPointer<UInt8>, inFieldsNamed name: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        var found = false
        bytes.withUnsafeBufferPointer { storage in
            forEachPosition(named: name) { position in
                guard !found else { return }
                let entry = position * 4
                let start = Int(index[entry + 2])
                let value = UnsafeBufferPointer(rebasing: storage[start..<start + Int(index[entry + 3])])
                found = HTTPHeaders.listContains(value, tokenBytes)
            }
        }
        return found
    }

    /// Appends a field. Names and values are not validated here; the serializer refuses unsafe ones.
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value.
    public mutating func add(name: String, value: String) {
        if isKnownValid {
            var name = name
            var value = value
            isKnownValid =
                name.withUTF8 { HTTP1Serializer.isFieldName($0) } && value.withUTF8 { HTTP1Serializer.isFieldValue($0) }
        }
        let nameStart = bytes.count
        bytes.append(contentsOf: name.utf8)
        let valueStart = bytes.count
        bytes.append(contentsOf: value.utf8)
        precondition(bytes.count <= Int(UInt32.max), "HTTPHeaders storage exceeds 4 GiB")
        index.append(UInt32(nameStart))
        index.append(UInt32(valueStart - nameStart))
        index.append(UInt32(valueStart))
        index.append(UInt32(bytes.count - valueStart))
    }

    /// Appends every field of `other`, in order.
    /// - Parameter other: The fields to append.
    public mutating func add(contentsOf other: HTTPHeaders) {
        for position in other.indices {
            add(name: other.name(at: position), value: other.value(at: position))
        }
    }

    /// Removes every field called `name`, then appends one with `value`.
    /// - Parameters:
    ///   - name: The field name, matched case-insensitively.
    ///   - value: The new value.
    public mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        add(name: name, value: value)
    }

    /// Removes every field called `name`.
    /// - Parameter name: The field name, matched case-insensitively.
    public mutating func remove(name: String) {
        var kept: [UInt32] = []
        kept.reserveCapacity(index.count)
        var removed = false
        var position = 0
        var name = name
        name.withUTF8 { query in
            bytes.withUnsafeBufferPointer { storage in
                while position < index.count / 4 {
                    let entry = position * 4
                    let start = Int(index[entry])
                    let fieldName = UnsafeBufferPointer(rebasing: storage[start..<start + Int(index[entry + 1])])
                    if ASCII.equalsCaseInsensitive(fieldName, query) {
                        removed = true
                    } else {
                        kept.append(contentsOf: index[entry..<entry + 4])
                    }
                    position += 1
                }
            }
        }
        guard removed else { return }
        index = kept
        compactIfWasteful()
    }

    /// Rewrites storage when less than half of it is still referenced, so repeated edits stay bounded.
    private mutating func compactIfWasteful() {
        var live = 0
        for position in indices {
            live += Int(index[position * 4 + 1] + index[position * 4 + 3])
        }
        guard live * 2 < bytes.count else { return }
        var newBytes: [UInt8] = []
        newBytes.reserveCapacity(live)
        var newIndex: [UInt32] = []
        newIndex.reserveCapacity(index.count)
        for position in indices {
            let entry = position * 4
            let nameStart = UInt32(newBytes.count)
            newBytes.append(contentsOf: bytes[Int(index[entry])..<Int(index[entry] + index[entry + 1])])
            let valueStart = UInt32(newBytes.count)
            newBytes.append(contentsOf: bytes[Int(index[entry + 2])..<Int(index[entry + 2] + index[entry + 3])])
            newIndex.append(contentsOf: [nameStart, index[entry + 1], valueStart, index[entry + 3]])
        }
        bytes = newBytes
        index = newIndex
    }

    /// The first position whose name matches, case-insensitively.
    private func firstPosition(named name: String) -> Int? {
        var result: Int?
        forEachPosition(named: name) { position in
            if result == nil { result = position }
        }
        return result
    }

    /// Calls `body` with each position whose name matches `name` case-insensitively.
    package func forEachPosition(named name: String, _ body: (Int) -> Void) {
        guard !index.isEmpty else { return }
        var name = name
        name.withUTF8 { query in forEachPosition(named: query, body) }
    }

    private func forEachPosition(named query: UnsafeBufferPointer<UInt8>, _ body: (Int) -> Void) {
        guard !index.isEmpty else { return }
        bytes.withUnsafeBufferPointer { storage in
            index.withUnsafeBufferPointer { index in
                for entry in stride(from: 0, to: index.count, by: 4) where Int(index[entry + 1]) == query.count {
                    let start = Int(index[entry])
                    let fieldName = UnsafeBufferPointer(rebasing: storage[start..<start + query.count])
                    if ASCII.equalsCaseInsensitive(fieldName, query) {
                        body(entry / 4)
                    }
                }
            }
        }
    }

    static func listContains(_ value: UnsafeBufferPointer<UInt8>, _ token: UnsafeBufferPointer<UInt8>) -> Bool {
        var start = 0
        while start <= value.count {
            var end = start
            while end < value.count && value[end] != ASCII.comma { end += 1 }
            var lower = start
            var upper = end
            while lower < upper && (value[lower] == ASCII.space || value[lower] == ASCII.tab) { lower += 1 }
            while upper > lower && (value[upper - 1] == ASCII.space || value[upper - 1] == ASCII.tab) { upper -= 1 }
            if ASCII.equalsCaseInsensitive(UnsafeBufferPointer(rebasing: value[lower..<upper]), token) {
                return true
            }
            start = end + 1
        }
        return false
    }

    /// Two lists are equal when they hold the same names and values, byte for byte, in the same order.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        guard lhs.count == rhs.count else { return false }
        // Copies of one list (a serializer's defaults handed to each request) share their storage: no byte compare.
        if lhs.sharesStorage(with: rhs) { return true }
        for position in lhs.indices {
            guard lhs.bytes[lhs.nameRange(at: position)].elementsEqual(rhs.bytes[rhs.nameRange(at: position)]),
                lhs.bytes[lhs.valueRange(at: position)].elementsEqual(rhs.bytes[rhs.valueRange(at: position)])
            else { return false }
        }
        return true
    }

    /// Whether both lists are copies of one, sharing their storage (and so equal).
    package func sharesStorage(with other: HTTPHeaders) -> Bool {
        guard !index.isEmpty, index.count == other.index.count, bytes.count == other.bytes.count else { return false }
        let sameIndex = index.withUnsafeBufferPointer { left in
            other.index.withUnsafeBufferPointer { right in left.baseAddress == right.baseAddress }
        }
        return sameIndex
            && bytes.withUnsafeBufferPointer { left in
                other.bytes.withUnsafeBufferPointer { right in left.baseAddress == right.baseAddress }
            }
    }

    /// Hashes names and values in order, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for position in indices {
            for byte in bytes[nameRange(at: position)] { hasher.combine(byte) }
            hasher.combine(0xFF as UInt8)
            for byte in bytes[valueRange(at: position)] { hasher.combine(byte) }
        }
    }

    /// Where the name of the field at `position` lies in storage.
    func nameRange(at position: Int) -> Range<Int> {
        let start = Int(index[position * 4])
        return start..<start + Int(index[position * 4 + 1])
    }

    /// Where the value of the field at `position` lies in storage.
    func valueRange(at position: Int) -> Range<Int> {
        let start = Int(index[position * 4 + 2])
        return start..<start + Int(index[position * 4 + 3])
    }

    /// The fields as `name: value` lines.
    public var description: String {
        map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }
}
