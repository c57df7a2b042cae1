import CWireLinux
import Glibc
import Synchronization

/// Watches kernel files that announce events with `POLLPRI` on a thread of its own: PSI triggers
/// (`/proc/pressure/memory`, `Documentation/accounting/psi.rst`) and kernfs files whose value changed (cgroup v2
/// `memory.events`, `Documentation/admin-guide/cgroup-v2.rst`: "a value change in this file generates a file
/// modified event", which `poll(2)` reports as `POLLPRI`).
///
/// `package`: WireClient's memory-pressure source uses it, and the descriptors stay in this room. The thread blocks in
/// `poll(2)` (no timeout, so no wake-ups without an event) on the files and an eventfd that `stop()` rings; it owns
/// the file descriptors and closes each once when it ends. The watcher owns the eventfd and closes it after the
/// thread ended.
package final class PriorityEventWatcher: Sendable {
    /// One file to watch.
    package struct File: Sendable {
        /// The path to open.
        package var path: String
        /// For a PSI trigger: the trigger lines to try in order until the kernel accepts one (each written whole,
        /// with its terminating NUL as the kernel's example does); empty for a file that is only read.
        package var triggers: [String]
        /// Creates a file to watch.
        package init(path: String, triggers: [String] = []) {
            self.path = path
            self.triggers = triggers
        }
    }

    /// The indices (into the `files` given to `init`) that opened, armed and are watched.
    package let watchedIndices: [Int]
    private let thread: PosixThread?
    private let doorbell: Lock<FileDescriptor>
    private let stopped = Lock(false)

    /// Opens and arms `files` and starts the thread; files that cannot be opened or armed (absent, refused) are
    /// skipped. With none left, no thread starts.
    /// - Parameters:
    ///   - files: What to watch.
    ///   - threadName: The thread's name (15 bytes are kept).
    ///   - onEvent: Called on the watcher's thread with the file's index and, for a file without triggers, its whole
    ///     content read again from the start (reading also re-arms a kernfs file); a trigger file gives `[]`.
    /// - Throws: `IOError` from `eventfd(2)` or `pthread_create(3)`.
    package init(
        files: [File], threadName: String,
        onEvent: @escaping @Sendable (_ index: Int, _ contents: [UInt8]) -> Void
    ) throws(IOError) {
        // The doorbell first: if it cannot be made, no file has been opened yet.
        let bell = try systemCall("eventfd") { eventfd(0, CInt(EFD_NONBLOCK) | CInt(EFD_CLOEXEC)) }
        doorbell = Lock(FileDescriptor(owning: bell))
        var opened: [(index: Int, fd: CInt, isTrigger: Bool)] = []
        for (index, file) in files.enumerated() {
            if let fd = Self.open(file) { opened.append((index, fd, !file.triggers.isEmpty)) }
        }
        watchedIndices = opened.map(\.index)
        guard !opened.isEmpty else {
            thread = nil
            return
        }
        let watched = opened
        do {
            thread = try PosixThread(name: threadName) {
                Self.run(watched, doorbell: bell, onEvent: onEvent)
            }
        } catch {
            for entry in opened { try? Posix.close(entry.fd) }
            throw error
        }
    }

    deinit {
        stop()
    }

    /// Ends the thread and waits for it; afterwards `onEvent` is not running and is never called again. Call it from
    /// any thread but the watcher's own (not from `onEvent`). Later calls do nothing.
    package func stop() {
        let first = stopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        if let thread {
            doorbell.withLock { bell in
                var one: UInt64 = 1
                let fd = bell.rawValue
                _ = try? nonBlockingCall("write") { Glibc.write(fd, &one, MemoryLayout<UInt64>.size) }
            }
            thread.join()
        }
        doorbell.withLock { bell in
            if bell.isOpen { try? bell.close() }
        }
    }

    /// Opens `file` non-blocking and writes its first accepted trigger; nil when it cannot be watched.
    private static func open(_ file: File) -> CInt? {
        let flags = (file.triggers.isEmpty ? O_RDONLY : O_RDWR) | O_NONBLOCK | O_CLOEXEC
        guard let fd = try? systemCall("open", { Glibc.open(file.path, flags) }) else { return nil }
        guard !file.triggers.isEmpty else { return fd }
        for trigger in file.triggers {
            var bytes = Array(trigger.utf8)
            bytes.append(0)
            let written = try? bytes.withUnsafeBytes { (buffer) throws(IOError) in
                try systemCall("write") { Glibc.write(fd, buffer.baseAddress, buffer.count) }
            }
            // EINVAL: a window the kernel refuses here (without CAP_SYS_RESOURCE it must be a multiple of 2 s).
            if written != nil { return fd }
        }
        try? Posix.close(fd)
        return nil
    }

    /// The thread's body: waits, reports, and closes the files when the doorbell rings.
    private static func run(
        _ files: [(index: Int, fd: CInt, isTrigger: Bool)], doorbell: CInt,
        onEvent: @Sendable (Int, [UInt8]) -> Void
    ) {
        var polled = [pollfd(fd: doorbell, events: Int16(POLLIN), revents: 0)]
        polled += files.map { pollfd(fd: $0.fd, events: Int16(POLLPRI), revents: 0) }
        defer { for file in files { try? Posix.close(file.fd) } }
        while true {
            let ready = try? polled.withUnsafeMutableBufferPointer { (buffer) throws(IOError) in
                try systemCall("poll") { Glibc.poll(buffer.baseAddress, nfds_t(buffer.count), -1) }
            }
            guard ready != nil else { return }
            if polled[0].revents != 0 { return }
            for slot in 1..<polled.count where polled[slot].revents != 0 {
                let events = Int32(polled[slot].revents)
                polled[slot].revents = 0
                let file = files[slot - 1]
                if events & Int32(POLLNVAL) != 0 {
                    polled[slot].fd = -1
                    continue
                }
                if file.isTrigger {
                    // A trigger reports POLLERR when it no longer exists; it would be reported again on every poll.
                    if events & Int32(POLLERR) != 0 {
                        polled[slot].fd = -1
                    } else if events & Int32(POLLPRI) != 0 {
                        onEvent(file.index, [])
                    }
                } else if events & Int32(POLLPRI) != 0 {
                    // kernfs marks a change with POLLERR|POLLPRI until the file is read again from the start.
                    guard let contents = readAgain(file.fd) else {
                        polled[slot].fd = -1
                        continue
                    }
                    onEvent(file.index, contents)
                }
            }
        }
    }

    /// The whole content of `fd` from offset 0 (kernel files are small), or nil when it cannot be read.
    private static func readAgain(_ fd: CInt) -> [UInt8]? {
        guard (try? systemCall("lseek", { lseek(fd, 0, SEEK_SET) })) != nil else { return nil }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while contents.count < 65_536 {
            let result = try? chunk.withUnsafeMutableBytes { (buffer) throws(IOError) in
                try nonBlockingCall("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
            }
            guard let result else { return nil }
            switch result {
            case .processed(let count):
                if count == 0 { return contents }
                contents += chunk[..<count]
            case .wouldBlock:
                return contents
            }
        }
        return contents
    }
}
