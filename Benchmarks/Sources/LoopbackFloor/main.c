// The floor of an SSE fan-out on this machine: what the kernel alone costs to move one frame to N loopback TCP
// connections, with no server around it. One sender thread per CPU in --sender-cpus, each owning an equal share
// of the connections, writes a frame of --frame-bytes to each of its sockets (one `send` each, as a server must);
// one receiver thread on --receiver-cpus reads all N sockets through one epoll instance, as SSEFanout does. The
// latency of (event, connection) is the time from the start of the event's sends to the return of the `recv`
// that got it. The receiver is a child process (so that each side needs only N descriptors); the two share the
// event's start time and the latencies through an anonymous shared mapping. Prints the same summary shape as SSEFanout and one `RESULT label=floor ...` line.
//
// Usage: LoopbackFloor [--subscribers 10000] [--events 10] [--interval-ms 1000] [--frame-bytes 110]
//                      [--sender-cpus 0] [--receiver-cpus 1] [--per-event 1]
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SENDERS 64

static long n_subs = 10000, n_events = 10, interval_ms = 1000, frame_bytes = 110;
static cpu_set_t sender_cpus, receiver_cpus;
static int *server_fds, *client_fds;
// Shared between the sender process and the receiver process.
typedef struct {
    _Atomic int64_t event_start;
    _Atomic long event;  // the event whose start `event_start` is
    _Atomic int stop;
    _Atomic int ready;
    long n_latencies;
    int64_t latencies[];
} shared_t;
static shared_t *shared;
static _Atomic long event_number = -1;  // the event the senders are to send; -1 before the first
static _Atomic int senders_done;
static _Atomic int stop;
static int n_senders;
static char *frame;
// Per event, its latest frame (ns after the event's start), shared with the receiver: printed with --per-event 1.
static int64_t *event_last;
static int per_event = 0;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what) {
    fprintf(stderr, "LoopbackFloor: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void parse_cpus(const char *list, cpu_set_t *set) {
    CPU_ZERO(set);
    char *copy = strdup(list), *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) CPU_SET(atoi(item), set);
    free(copy);
}

static int nth_cpu(const cpu_set_t *set, int n) {
    for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, set) && seen++ == n) return cpu;
    }
    return -1;
}

static void *sender(void *argument) {
    int index = (int)(intptr_t)argument;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(nth_cpu(&sender_cpus, index), &one);
    sched_setaffinity(0, sizeof one, &one);
    long first = n_subs * index / n_senders, last = n_subs * (index + 1) / n_senders;
    for (long sent = -1; !atomic_load(&stop);) {
        long event = atomic_load(&event_number);
        if (event == sent) continue;  // spin: a wake-up here would be part of the figure
        for (long i = first; i < last; i++) {
            if (send(server_fds[i], frame, (size_t)frame_bytes, MSG_NOSIGNAL) != frame_bytes) die("send");
        }
        sent = event;
        atomic_fetch_add(&senders_done, 1);
    }
    return NULL;
}

static void receiver(void) {
    sched_setaffinity(0, sizeof receiver_cpus, &receiver_cpus);
    int epoll_fd = epoll_create1(0);
    for (long i = 0; i < n_subs; i++) {
        struct epoll_event interest = {.events = EPOLLIN, .data.u64 = (uint64_t)i};
        if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, client_fds[i], &interest) != 0) die("epoll_ctl");
    }
    static struct epoll_event events[1024];
    static char buffer[65536];
    atomic_store(&shared->ready, 1);
    while (!atomic_load(&shared->stop)) {
        int n = epoll_wait(epoll_fd, events, 1024, 50);
        for (int k = 0; k < n; k++) {
            ssize_t got = recv(client_fds[events[k].data.u64], buffer, sizeof buffer, 0);
            if (got > 0) {
                int64_t latency = now_ns() - atomic_load(&shared->event_start);
                long event = atomic_load(&shared->event);
                shared->latencies[shared->n_latencies++] = latency;
                if (event >= 0 && latency > event_last[event]) event_last[event] = latency;
            }
        }
    }
}

static int compare(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double percentile_ms(double p) {
    long index = (long)(p * (double)(shared->n_latencies - 1) + 0.5);
    return shared->n_latencies ? (double)shared->latencies[index] / 1e6 : -1;
}

int main(int argc, char **argv) {
    parse_cpus("0", &sender_cpus);
    parse_cpus("1", &receiver_cpus);
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *key = argv[i], *value = argv[i + 1];
        if (!strcmp(key, "--subscribers")) n_subs = atol(value);
        else if (!strcmp(key, "--events")) n_events = atol(value);
        else if (!strcmp(key, "--interval-ms")) interval_ms = atol(value);
        else if (!strcmp(key, "--frame-bytes")) frame_bytes = atol(value);
        else if (!strcmp(key, "--sender-cpus")) parse_cpus(value, &sender_cpus);
        else if (!strcmp(key, "--receiver-cpus")) parse_cpus(value, &receiver_cpus);
        else if (!strcmp(key, "--per-event")) per_event = atoi(value);
        else {
            fprintf(stderr, "unknown option %s\n", key);
            return 2;
        }
    }
    n_senders = CPU_COUNT(&sender_cpus);
    if (n_senders < 1 || n_senders > MAX_SENDERS || n_subs < 1 || n_events < 1 || frame_bytes < 1) {
        fprintf(stderr, "usage: LoopbackFloor [--subscribers N] [--events M] [--sender-cpus 0,1] ...\n");
        return 2;
    }
    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    if ((rlim_t)(n_subs + 16) > limit.rlim_cur) {
        fprintf(stderr, "LoopbackFloor: %ld connections need %ld descriptors; `ulimit -n` is %llu\n", n_subs,
            n_subs + 16, (unsigned long long)limit.rlim_cur);
        return 1;
    }
    server_fds = calloc((size_t)n_subs, sizeof *server_fds);
    client_fds = calloc((size_t)n_subs, sizeof *client_fds);
    size_t shared_size = sizeof(shared_t) + (size_t)n_subs * (size_t)n_events * sizeof(int64_t);
    shared = mmap(NULL, shared_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    event_last = mmap(NULL, (size_t)n_events * sizeof(int64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    frame = malloc((size_t)frame_bytes);
    if (!server_fds || !client_fds || shared == MAP_FAILED || event_last == MAP_FAILED || !frame) die("malloc");
    atomic_store(&shared->event, -1);
    memset(frame, 'x', (size_t)frame_bytes);

    int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in address = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    socklen_t length = sizeof address;
    if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 4096)) die("listen");
    getsockname(listener, (struct sockaddr *)&address, &length);
    pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        close(listener);
        for (long i = 0; i < n_subs; i++) {
            client_fds[i] = socket(AF_INET, SOCK_STREAM, 0);
            if (connect(client_fds[i], (struct sockaddr *)&address, sizeof address)) die("connect");
            fcntl(client_fds[i], F_SETFL, O_NONBLOCK);
        }
        receiver();
        _exit(0);
    }
    for (long i = 0; i < n_subs; i++) {
        if ((server_fds[i] = accept(listener, NULL, NULL)) < 0) die("accept");
        setsockopt(server_fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    while (!atomic_load(&shared->ready)) usleep(1000);

    pthread_t threads[MAX_SENDERS];
    for (int i = 0; i < n_senders; i++) pthread_create(&threads[i], NULL, sender, (void *)(intptr_t)i);
    usleep(200000);
    for (long event = 0; event < n_events; event++) {
        atomic_store(&senders_done, 0);
        atomic_store(&shared->event_start, now_ns());
        atomic_store(&shared->event, event);
        atomic_store(&event_number, event);
        while (atomic_load(&senders_done) < n_senders) usleep(100);
        usleep((useconds_t)interval_ms * 1000);
    }
    atomic_store(&stop, 1);
    atomic_store(&shared->stop, 1);
    for (int i = 0; i < n_senders; i++) pthread_join(threads[i], NULL);
    waitpid(child, NULL, 0);
    long n_latencies = shared->n_latencies;
    qsort(shared->latencies, (size_t)n_latencies, sizeof(int64_t), compare);
    printf("floor: %ld connections, %ld events every %ld ms, %d sender thread(s); %ld frames received of %ld\n",
        n_subs, n_events, interval_ms, n_senders, n_latencies, n_subs * n_events);
    printf("  send-to-receive p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", percentile_ms(0.5), percentile_ms(0.99),
        percentile_ms(1.0));
    for (long event = 0; per_event && event < n_events; event++) {
        printf("  event %ld: last frame %.2f ms\n", event, (double)event_last[event] / 1e6);
    }
    // The median over the events of each event's last frame: what a typical event's fan-out takes, which one slow
    // event (a twentieth of the latencies, so most of the p99) does not move.
    qsort(event_last, (size_t)n_events, sizeof(int64_t), compare);
    double last_ms = (double)event_last[n_events / 2] / 1e6;
    printf("  per event (median): last frame after %.2f ms\n", last_ms);
    printf("RESULT label=floor subscribers=%ld events=%ld p50_ms=%.3f p99_ms=%.3f max_ms=%.3f lost=%ld last_ms=%.3f\n",
        n_subs, n_events, percentile_ms(0.5), percentile_ms(0.99), percentile_ms(1.0), n_subs * n_events - n_latencies,
        last_ms);
    return 0;
}
