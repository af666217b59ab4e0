// For running feedback-host under valgrind 3.19 (post-instructions.sh): valgrind dies with an internal SIGSEGV when a
// client's sigsuspend mask lies in read-only memory, as libdispatch's does where it parks the main thread
// (`_dispatch_sigsuspend`). Preloaded, this hands the kernel a copy of the mask on the stack instead.
// Build: cc -O2 -shared -fPIC -o sigsuspend-shim.so sigsuspend-shim.c
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, _NSIG / 8);
}
