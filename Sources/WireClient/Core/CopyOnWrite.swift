/// A value behind one shared reference that is copied on the first change after the reference was shared, as
/// `Array` is: a struct holding it copies as one retain however many fields the value has, and its only owner
/// changes it in place.
///
/// The reference is a one-element `ContiguousArray`, which brings the uniqueness check and an earned `Sendable`
/// conformance; a class of Wire's own with mutable fields could be `Sendable` only by assertion.
struct CopyOnWrite<Value: Sendable>: Sendable {
    /// Always exactly one element.
    private var storage: ContiguousArray<Value>

    init(_ value: Value) {
        storage = [value]
    }

    /// The value: read in place, and changed in place unless another copy shares it.
    var value: Value {
        _read { yield storage[0] }
        _modify { yield &storage[0] }
    }
}
