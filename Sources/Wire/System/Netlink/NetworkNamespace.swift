import CWireLinux
import Glibc
import Synchronization

/// Network namespaces (`ip netns`), for tests that watch a network of their own.
package enum NetworkNamespace {
    /// Runs `body` on a new thread that first joins the network namespace open at `path` (such as
    /// `/var/run/netns/NAME`) with setns(2), and returns what it returns. Only that thread changes namespace: the
    /// sockets it opens belong to the namespace, whichever thread uses them afterwards.
    ///
    /// - Throws: `IOError` from `open(2)`, `setns(2)` or `pthread_create(3)`, or what `body` throws.
    package static func run<T: Sendable>(inNamespaceAt path: String, _ body: @escaping @Sendable () throws -> T) throws -> T {
        let outcome = Lock<Result<T, any Error>?>(nil)
        let thread = try PosixThread(name: "wire-netns") {
            let result = Result<T, any Error> {
                var namespace = FileDescriptor(owning: try systemCall("open") { open(path, O_RDONLY | O_CLOEXEC) })
                defer { try? namespace.close() }
                let fd = namespace.rawValue
                _ = try systemCall("setns") { c_wire_setns_network(fd) }
                return try body()
            }
            outcome.withLock { $0 = result }
        }
        thread.join()
        // The thread stored its result before it ended, and join waited for that.
        return try outcome.withLock { $0! }.get()
    }
}
