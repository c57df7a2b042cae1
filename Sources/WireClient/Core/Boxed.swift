/// An immutable value behind a reference, so that the struct holding it stays small to copy (async frames, results
/// and errors move through every step of a task) or to allocate (a rarely used part of a task's state). Equal and
/// hashed by its value, when the value is.
package final class Boxed<Value: Sendable>: Sendable {
    package let value: Value

    package init(_ value: Value) {
        self.value = value
    }
}

extension Boxed: Equatable where Value: Equatable {
    package static func == (lhs: Boxed, rhs: Boxed) -> Bool { lhs === rhs || lhs.value == rhs.value }
}

extension Boxed: Hashable where Value: Hashable {
    package func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
