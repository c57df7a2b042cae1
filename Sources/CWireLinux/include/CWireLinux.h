#ifndef C_WIRE_LINUX_H
#define C_WIRE_LINUX_H


// Linux-only headers that Swift's Glibc module does not export, and shims for
// what Swift cannot import directly (macros, variadic functions). Everything
// here is `c_wire_*` so it can never collide with a libc symbol.

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/// fcntl(2) with an integer argument; Swift cannot call the variadic original.
static inline int c_wire_fcntl_int(int fd, int cmd, int arg) { return fcntl(fd, cmd, arg); }

/// ioctl(2) FIONREAD: the bytes a socket holds for reading; Swift cannot call the variadic original.
static inline int c_wire_fionread(int fd, int *count) { return ioctl(fd, FIONREAD, count); }

/// ioctl(2) SIOCOUTQ: the bytes in a TCP socket's send queue, not yet sent or sent and not yet acknowledged.
static inline int c_wire_siocoutq(int fd, int *count) { return ioctl(fd, SIOCOUTQ, count); }

/// The largest Unix-domain socket path, including its terminating NUL.
static inline size_t c_wire_sun_path_capacity(void) { return sizeof(((struct sockaddr_un *)0)->sun_path); }

/// epoll_event is packed on x86_64; these accessors hide its layout from Swift.
static inline uint64_t c_wire_epoll_event_data(const struct epoll_event *event) { return event->data.u64; }
static inline uint32_t c_wire_epoll_event_events(const struct epoll_event *event) { return event->events; }
static inline struct epoll_event c_wire_epoll_event_make(uint32_t events, uint64_t data) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = data;
    return event;
}

// The functions below need _GNU_SOURCE, which must not leak into this header (it would make
// the C types here differ from Glibc's module); they are defined in shim.c.

/// epoll_pwait2(2): epoll_wait with a nanosecond timeout (Linux 5.11+); NULL waits forever.
int c_wire_epoll_pwait2(int epfd, struct epoll_event *events, int max, const struct timespec *timeout);

/// accept4(2): the peer's address is written to `address` (at most `*length` bytes; `*length` becomes its size).
int c_wire_accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/// Names the calling thread (at most 15 bytes are kept).
void c_wire_set_thread_name(const char *name);

/// The C library's message for an errno value (GNU strerror_r), using `buffer` if needed.
const char *c_wire_strerror(int error, char *buffer, size_t length);

/// The kernel thread id of the calling thread (gettid(2)).
int c_wire_gettid(void);

/// Bytes of heap the process has allocated and not freed, over every malloc arena
/// (mallinfo2's uordblks plus hblkhd): what benchmarks and tests use to measure the memory an
/// idle connection costs, free of the page-level noise of RSS.
size_t c_wire_heap_bytes_in_use(void);

/// getrusage(RUSAGE_THREAD): the calling thread's resource usage.
int c_wire_getrusage_thread(struct rusage *usage);

/// bind(2) of a netlink socket to the kernel-assigned port with the multicast `groups` (a `sockaddr_nl`, whose
/// header would clash with Glibc's module here).
int c_wire_netlink_bind(int fd, uint32_t groups);

/// setns(2) into the network namespace open at `fd` (CLONE_NEWNET), for the calling thread only.
int c_wire_setns_network(int fd);

/// ThreadSanitizer's `__tsan_acquire` and `__tsan_release` when the process runs with it, else NULL: looked up once
/// at load (shim.c), so a build without the sanitizer pays a load and a branch per annotation, and no call.
extern void (*c_wire_tsan_acquire_hook)(void *address);
extern void (*c_wire_tsan_release_hook)(void *address);

/// Tells ThreadSanitizer that the calling thread now sees everything done before a `c_wire_tsan_release` of the same
/// address: the happens-before edge of a synchronisation it cannot see (a futex, a kernel hand-over). No-op without it.
static inline void c_wire_tsan_acquire(void *address) {
    if (c_wire_tsan_acquire_hook) c_wire_tsan_acquire_hook(address);
}

/// The other end of `c_wire_tsan_acquire`: what the calling thread did so far is published at `address`.
static inline void c_wire_tsan_release(void *address) {
    if (c_wire_tsan_release_hook) c_wire_tsan_release_hook(address);
}

/// Registers a cancellation record with the current Swift task (the Swift runtime's `swift_task_addCancellationHandler`,
/// the entry point the standard library's inlined `withTaskCancellationHandler` calls): `on_cancel(context)` runs now if
/// the task is already cancelled, or on the cancelling thread while the record stands. Returns the record, for
/// `c_wire_task_remove_cancellation_handler`. Every caller passes the same `on_cancel`.
void *c_wire_task_add_cancellation_handler(void (*on_cancel)(void *context), void *context);

/// Removes a record `c_wire_task_add_cancellation_handler` returned (the runtime's
/// `swift_task_removeCancellationHandler`); its handler does not run after this returns.
void c_wire_task_remove_cancellation_handler(void *record);

#endif
