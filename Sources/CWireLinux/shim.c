// GNU extensions behind the declarations in CWireLinux.h. _GNU_SOURCE is defined here only,
// so the header's view of the C types matches Glibc's Swift module.
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <sched.h>
#include "CWireLinux.h"

int c_wire_epoll_pwait2(int epfd, struct epoll_event *events, int max, const struct timespec *timeout) {
    return epoll_pwait2(epfd, events, max, timeout, NULL);
}

int c_wire_accept4(int fd, struct sockaddr *address, socklen_t *length, int flags) {
    return accept4(fd, address, length, flags);
}

void c_wire_set_thread_name(const char *name) { pthread_setname_np(pthread_self(), name); }

const char *c_wire_strerror(int error, char *buffer, size_t length) { return strerror_r(error, buffer, length); }

int c_wire_gettid(void) { return (int)syscall(SYS_gettid); }

size_t c_wire_heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

int c_wire_getrusage_thread(struct rusage *usage) { return getrusage(RUSAGE_THREAD, usage); }

int c_wire_netlink_bind(int fd, uint32_t groups) {
    struct sockaddr_nl address;
    memset(&address, 0, sizeof address);
    address.nl_family = AF_NETLINK;
    address.nl_groups = groups;
    return bind(fd, (struct sockaddr *)&address, sizeof address);
}

int c_wire_setns_network(int fd) { return setns(fd, CLONE_NEWNET); }

void (*c_wire_tsan_acquire_hook)(void *) = NULL;
void (*c_wire_tsan_release_hook)(void *) = NULL;

// ThreadSanitizer's runtime is linked into the executable only in a `--sanitize=thread` build, and it exports these
// entry points: found here before main, they stay NULL in every other build.
__attribute__((constructor)) static void c_wire_find_thread_sanitizer(void) {
    c_wire_tsan_acquire_hook = (void (*)(void *))dlsym(RTLD_DEFAULT, "__tsan_acquire");
    c_wire_tsan_release_hook = (void (*)(void *))dlsym(RTLD_DEFAULT, "__tsan_release");
}

// The Swift runtime's cancellation records, declared as libswift_Concurrency exports them: Swift's calling convention,
// a handler that takes its context in the Swift context register. Called from C, not declared in Swift, because a
// Swift declaration of a runtime symbol is reserved to the standard library.
typedef __attribute__((swiftcall)) void (*c_wire_swift_cancellation_handler)(void *__attribute__((swift_context)));
extern __attribute__((swiftcall)) void *swift_task_addCancellationHandler(
    c_wire_swift_cancellation_handler handler, void *context);
extern __attribute__((swiftcall)) void swift_task_removeCancellationHandler(void *record);

// The one handler Wire registers (a C function pointer from Swift), read by the trampoline the runtime calls. Written
// only when it differs, so the line stays shared between the cores that read it.
static void (*c_wire_cancellation_hook)(void *context);

static __attribute__((swiftcall)) void c_wire_cancellation_trampoline(void *__attribute__((swift_context)) context) {
    __atomic_load_n(&c_wire_cancellation_hook, __ATOMIC_ACQUIRE)(context);
}

void *c_wire_task_add_cancellation_handler(void (*on_cancel)(void *context), void *context) {
    if (__atomic_load_n(&c_wire_cancellation_hook, __ATOMIC_RELAXED) != on_cancel) {
        __atomic_store_n(&c_wire_cancellation_hook, on_cancel, __ATOMIC_RELEASE);
    }
    return swift_task_addCancellationHandler(c_wire_cancellation_trampoline, context);
}

void c_wire_task_remove_cancellation_handler(void *record) { swift_task_removeCancellationHandler(record); }
