import CWireLinux
import Glibc

/// A joinable POSIX thread running one closure: the home of an event loop or a resolver worker.
package final class PosixThread: Sendable {
    private let handle: pthread_t

    /// Starts a thread named `name` (at most 15 bytes are kept by the kernel).
    package init(name: String, detached: Bool = false, _ body: @escaping @Sendable () -> Void) throws(IOError) {
        final class Box: Sendable {
            let name: String
            let body: @Sendable () -> Void
            init(name: String, body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
        }
        let box = Unmanaged.passRetained(Box(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { argument in
                let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
                c_wire_set_thread_name(String(box.name.utf8.prefix(15))!)
                box.body()
                return nil
            }, box)
        guard result == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw IOError(syscall: "pthread_create", errno: Errno(rawValue: result))
        }
        handle = thread
        if detached { pthread_detach(thread) }
    }

    /// Waits for the thread to finish.
    package func join() {
        pthread_join(handle, nil)
    }

    /// Lets the thread release its resources itself when it finishes; it must not be joined afterwards.
    func detach() {
        pthread_detach(handle)
    }
}
