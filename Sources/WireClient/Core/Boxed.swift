/// An immutable value behind a reference, so that the struct holding it stays small to copy (async frames, results
/// and errors move through every step of a task). Equal and hashed by its value.
final class Boxed<Value: Sendable & Hashable>: Sendable, Hashable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }

    static func == (lhs: Boxed, rhs: Boxed) -> Bool { lhs === rhs || lhs.value == rhs.value }

    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
