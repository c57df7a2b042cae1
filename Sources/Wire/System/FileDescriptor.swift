/// An open file descriptor with exactly one owner.
///
/// It cannot be copied, so there is never a second holder that could close it again or use it
/// after close. It is closed by `close()` or, failing that, when its owner goes away.
package struct FileDescriptor: ~Copyable, Sendable {
    /// The raw descriptor, or -1 once closed.
    package private(set) var rawValue: CInt

    /// Takes ownership of an open descriptor.
    init(owning rawValue: CInt) {
        precondition(rawValue >= 0, "FileDescriptor(owning:) needs an open descriptor, got \(rawValue)")
        self.rawValue = rawValue
    }

    /// Whether the descriptor is still open.
    package var isOpen: Bool { rawValue >= 0 }

    /// Closes the descriptor. Closing twice is a programming error.
    ///
    /// The corresponding C function is `close(2)`.
    package mutating func close() throws(IOError) {
        precondition(rawValue >= 0, "FileDescriptor closed twice")
        let fd = rawValue
        rawValue = -1
        try Posix.close(fd)
    }

    deinit {
        if rawValue >= 0 { try? Posix.close(rawValue) }
    }
}
