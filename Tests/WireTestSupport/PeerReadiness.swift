import Foundation
import Glibc

/// Waits for a peer process to say it is ready by what it does, not by probing it between sleeps: `poll(2)` sleeps
/// until the sign arrives, the peer exits, or the deadline passes.
///
/// `exitPipe` is the read end of a pipe whose only writer is the process that runs the peer (its standard output
/// with nothing else writing there): it reaches end of file when that process exits, so a peer that fails to start
/// fails the wait at once instead of at the deadline.
public enum PeerReadiness {
    /// Why a wait ended without the sign.
    public enum Failure: Error, Equatable {
        /// The peer's process exited first.
        case exited
        /// The deadline passed.
        case timedOut
        /// A system call failed (its errno).
        case system(Int32)
    }

    /// Waits until a file named `name` in `folder` has been written and closed (a pid file: nginx writes its own
    /// once every listening socket is bound and listening). The watch comes first, then the peer: `start` starts it
    /// and returns its exit pipe.
    public static func awaitFile(
        named name: String, in folder: String, within timeout: Duration, startingWith start: () throws -> FileHandle
    ) throws {
        let watch = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard watch >= 0 else { throw Failure.system(errno) }
        defer { close(watch) }
        guard inotify_add_watch(watch, folder, UInt32(IN_CLOSE_WRITE | IN_MOVED_TO)) >= 0 else { throw Failure.system(errno) }
        let exitPipe = try start()
        let path = folder + "/" + name
        let deadline = ContinuousClock.now + timeout * Sanitizer.timeScale
        var events = [UInt8](repeating: 0, count: 4096)
        while !isWritten(path) {
            do {
                try waitForInput(watch, exitPipe: exitPipe.fileDescriptor, until: deadline)
            } catch Failure.exited where isWritten(path) {
                // The file and the end of the exit pipe came together (a peer that writes it and then exits, or
                // points its standard output elsewhere): poll reports both, and the file is what was awaited.
                return
            }
            // Drain the events; which file they name does not matter, the check above reads the file itself.
            _ = events.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
        }
    }

    /// Reads `output` (the peer's standard output, a pipe) until a line equal to `line` arrives (`openssl s_server`
    /// prints `ACCEPT` once it listens). End of file means the peer exited.
    public static func awaitLine(_ line: String, on output: FileHandle, within timeout: Duration) throws {
        let descriptor = output.fileDescriptor
        let deadline = ContinuousClock.now + timeout * Sanitizer.timeScale
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            try waitForInput(descriptor, exitPipe: nil, until: deadline)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw Failure.system(errno)
            }
            if count == 0 { throw Failure.exited }
            pending += chunk[0..<count]
            while let newline = pending.firstIndex(of: 0x0A) {
                let text = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                if text == line { return }
            }
        }
    }

    private static func isWritten(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_size > 0
    }

    /// Sleeps in `poll(2)` until `descriptor` is readable; throws when `exitPipe` (if any) reaches end of file or
    /// the deadline passes.
    private static func waitForInput(_ descriptor: Int32, exitPipe: Int32?, until deadline: ContinuousClock.Instant) throws {
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw Failure.timedOut }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var entries = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            if let exitPipe { entries.append(pollfd(fd: exitPipe, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&entries, nfds_t(entries.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw Failure.system(errno)
            }
            // The exit pipe carries no data: readable or hung up, its writer is gone.
            if entries.count > 1, entries[1].revents != 0 { throw Failure.exited }
            if entries[0].revents != 0 { return }
        }
    }
}
