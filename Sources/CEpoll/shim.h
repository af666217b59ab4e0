#ifndef FEEDBACKHOST_CEPOLL_SHIM_H
#define FEEDBACKHOST_CEPOLL_SHIM_H
// Linux epoll, accept4, eventfd and CPU affinity, which Glibc's Swift module map leaves out (they need _GNU_SOURCE,
// which must not be defined here: it would change shared types such as fd_set), and a cache prefetch, which Swift
// has no spelling of. Used only by HTTPServer.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/types.h>

extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
extern int sched_getaffinity(pid_t pid, size_t size, void *mask);

/// The number of CPUs this process may run on (taskset), at least 1.
static inline int cepoll_usable_cpu_count(void) {
    unsigned long mask[16] = {0};
    if (sched_getaffinity(0, sizeof(mask), mask) != 0) {
        return 1;
    }
    int n = 0;
    for (int i = 0; i < 16; i++) {
        n += __builtin_popcountl(mask[i]);
    }
    return n > 0 ? n : 1;
}

/// Asks the CPU to bring the cache line at `address` in for writing, without waiting for it: a fan-out's next
/// connections are fetched while the kernel sends to this one.
static inline void cepoll_prefetch(const void *address) {
    __builtin_prefetch(address, 1, 3);
}
#endif
