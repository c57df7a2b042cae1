import CWireLinux
import Glibc
import Synchronization

extension Posix {
    /// Sends up to `count` bytes of `file`, from `offset`, to the socket `socket` without copying them through user
    /// space, and advances `offset` past what was sent. A socket that would block gives `.wouldBlock`;
    /// `.processed(0)` with `count > 0` means the file ends at `offset`.
    ///
    /// `sendfile(2)` takes no `MSG_NOSIGNAL`: on a connection the peer has closed the kernel raises SIGPIPE at the
    /// calling thread. Wire never changes the process's signal dispositions, so the call runs with SIGPIPE blocked
    /// in this thread's mask, and a SIGPIPE it left pending is taken back before the mask is restored: the caller
    /// sees EPIPE, as with `send(MSG_NOSIGNAL)`.
    ///
    /// The corresponding C function is `sendfile(2)`.
    package static func sendfile(
        to socket: CInt, from file: CInt, offset: inout Int, count: Int
    ) throws(IOError) -> IOResult<Int> {
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var previousMask = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previousMask)
        defer { pthread_sigmask(SIG_SETMASK, &previousMask, nil) }
        var position = off_t(offset)
        let result: IOResult<Int>
        do throws(IOError) {
            result = try nonBlockingCall("sendfile") { Glibc.sendfile(socket, file, &position, count) }
        } catch {
            if error.errno == .brokenPipe { discardPendingPipeSignal(wasBlocked: sigismember(&previousMask, SIGPIPE) == 1) }
            throw error
        }
        if case .processed(let sent) = result {
            offset = Int(position)
            SendFileStatistics.bytesSent.add(sent, ordering: .relaxed)
        }
        return result
    }

    /// Takes the SIGPIPE that a failed `sendfile` left pending on this thread, unless SIGPIPE was already blocked
    /// here before (then a pending one may be someone else's, and stays).
    private static func discardPendingPipeSignal(wasBlocked: Bool) {
        guard !wasBlocked else { return }
        var pending = sigset_t()
        guard sigpending(&pending) == 0, sigismember(&pending, SIGPIPE) == 1 else { return }
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var noWait = timespec(tv_sec: 0, tv_nsec: 0)
        while sigtimedwait(&pipeSignal, nil, &noWait) == -1 && errno == EINTR {}
    }
}

/// How many bytes `sendfile(2)` has sent in this process: lets tests tell a file body the kernel sent from one that
/// was read into memory and written.
package enum SendFileStatistics {
    /// Bytes sent by `sendfile(2)` since the process started.
    package static let bytesSent = Atomic<Int>(0)
}
