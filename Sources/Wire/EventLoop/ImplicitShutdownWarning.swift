import Synchronization

/// The warning for an object released while it still ran, which Wire then shuts down itself: said once per
/// process per kind of object, on standard error, so a program that forgets `shutdown()` in a loop is told
/// without being flooded.
package enum ImplicitShutdownWarning {
    private static let warned = Lock<Set<String>>([])

    /// Warns that a `kind` (`HTTPClient`, `EventLoopGroup`, `HTTPServer`) was released without `shutdown()`,
    /// unless that was already said for this kind.
    /// - Returns: Whether the warning was written now.
    @discardableResult
    package static func emit(for kind: String) -> Bool {
        guard warned.withLock({ $0.insert(kind).inserted }) else { return false }
        Posix.writeToStandardError("wire: \(kind) released without shutdown(); shutting it down\n")
        return true
    }
}
