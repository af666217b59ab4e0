// sse-fanout-probe: N subscribers of one session's SSE stream over loopback, one epoll loop, no threads.
// Once every subscriber has its first snapshot it prints the server's RSS growth per idle stream (when given the
// server's pid), then posts EVENTS increments, one every INTERVAL_MS, on a keep-alive connection, and records for
// each subscriber the time from just before each POST to the arrival of the `data: {"rev":R` line of that state.
// Prints received / lost (expected N * EVENTS), p50 / p99 / max, and the slowest subscriber per event.
// Build: cc -O2 -o sse-fanout-probe sse-fanout-probe.c
// Usage: sse-fanout-probe PORT SESSION_ID N EVENTS INTERVAL_MS [SERVER_PID]
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
static long rss_kb(int pid) {
    if (pid <= 0) return -1;
    char path[64]; snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r"); if (!f) return -1;
    char line[256]; long kb = -1;
    while (fgets(line, sizeof line, f)) if (strncmp(line, "VmRSS:", 6) == 0) kb = atol(line + 6);
    fclose(f); return kb;
}
static int cmp(const void *a, const void *b) { uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b; return x < y ? -1 : x > y; }

typedef struct { int fd; char carry[64]; int carry_len; long last_rev; int got_first; } sub_t;

static int connect_to(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0}; a.sin_family = AF_INET; a.sin_port = htons(port); a.sin_addr.s_addr = htonl(0x7f000001);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); exit(1); }
    int one = 1; setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

int main(int argc, char **argv) {
    if (argc < 6) { fprintf(stderr, "usage\n"); return 2; }
    int port = atoi(argv[1]); const char *id = argv[2]; int n = atoi(argv[3]); int events = atoi(argv[4]); int interval = atoi(argv[5]);
    int srv = argc > 6 ? atoi(argv[6]) : 0;
    long rss0 = rss_kb(srv);
    sub_t *subs = calloc(n, sizeof(sub_t));
    uint64_t *lat = malloc(sizeof(uint64_t) * (size_t)n * events); size_t nlat = 0;
    uint64_t *posted = calloc(events + 2, sizeof(uint64_t));
    uint64_t *evmax = calloc(events + 2, sizeof(uint64_t));
    int ep = epoll_create1(0);
    char req[512];
    int rl = snprintf(req, sizeof req, "GET /v1/sessions/%s/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n", id);
    for (int i = 0; i < n; i++) {
        subs[i].fd = connect_to(port); subs[i].last_rev = -1;
        if (write(subs[i].fd, req, rl) != rl) { perror("write"); return 1; }
        fcntl(subs[i].fd, F_SETFL, O_NONBLOCK);
        struct epoll_event e = { .events = EPOLLIN, .data.u32 = i };
        epoll_ctl(ep, EPOLL_CTL_ADD, subs[i].fd, &e);
    }
    int poster = connect_to(port);
    char body[] = "{\"type\":\"increment\"}";
    char post[512];
    int pl = snprintf(post, sizeof post, "POST /v1/sessions/%s/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s", id, strlen(body), body);
    static char buf[65536];
    struct epoll_event evs[256];
    int firsts = 0, sent = 0; uint64_t next_post = 0; long received = 0; long base_rev = -1;
    uint64_t start = now_ns();
    while (1) {
        uint64_t t = now_ns();
        static int idle_reported = 0;
        if (firsts == n && base_rev >= 0 && !idle_reported) {
            idle_reported = 1;
            usleep(500000);
            long rss1 = rss_kb(srv);
            if (rss0 > 0) printf("idle: server RSS %ld kB before, %ld kB with %d streams: %.0f B per stream\n", rss0, rss1, n, (rss1 - rss0) * 1024.0 / n);
        }
        if (firsts == n && base_rev >= 0) {
            if (sent < events && t >= next_post) {
                sent++; posted[sent] = now_ns();
                if (write(poster, post, pl) != pl) { perror("post"); return 1; }
                char r[4096]; ssize_t k = read(poster, r, sizeof r); (void)k;  // blocking: the answer comes after the reduce
                next_post = posted[sent] + (uint64_t)interval * 1000000ull;
            }
            if (sent == events && t > posted[sent] + 3000000000ull) break;
        } else if (t - start > 60000000000ull) { fprintf(stderr, "only %d of %d subscribers got a snapshot\n", firsts, n); return 1; }
        int k = epoll_wait(ep, evs, 256, 1);
        for (int j = 0; j < k; j++) {
            sub_t *s = &subs[evs[j].data.u32];
            ssize_t m = read(s->fd, buf + 64, sizeof buf - 64);
            if (m <= 0) { if (m == 0 || errno != EAGAIN) { epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL); } continue; }
            uint64_t at = now_ns();
            char *p = buf + 64 - s->carry_len; memcpy(p, s->carry, s->carry_len);
            size_t len = m + s->carry_len;
            const char *needle = "data: {\"rev\":";
            char *q = p; char *end = p + len;
            while ((q = memmem(q, end - q, needle, 13)) != NULL) {
                char *digits = q + 13; char *e2 = digits; while (e2 < end && *e2 >= '0' && *e2 <= '9') e2++;
                if (e2 == end) break;
                if (e2 < p + s->carry_len) { q = e2; continue; }  // counted on the previous read
                long rev = strtol(digits, NULL, 10);
                if (!s->got_first) { s->got_first = 1; firsts++; if (base_rev < 0) base_rev = rev; }
                else if (base_rev >= 0) { long e = rev - base_rev; if (e >= 1 && e <= sent && nlat < (size_t)n * events) { lat[nlat++] = at - posted[e]; received++; if (at - posted[e] > evmax[e]) evmax[e] = at - posted[e]; } }
                s->last_rev = rev; q = e2;
            }
            size_t keep = len < 40 ? len : 40; memcpy(s->carry, end - keep, keep); s->carry_len = (int)keep;
        }
    }
    qsort(lat, nlat, sizeof(uint64_t), cmp);
    long expected = (long)n * events;
    printf("subscribers=%d events=%d received=%ld lost=%ld p50=%.2fms p99=%.2fms max=%.2fms\n", n, events, received, expected - received,
           nlat ? lat[nlat / 2] / 1e6 : 0, nlat ? lat[(size_t)(nlat * 0.99)] / 1e6 : 0, nlat ? lat[nlat - 1] / 1e6 : 0);
    printf("max per event (ms):");
    for (int e = 1; e <= events; e++) printf(" %.0f", evmax[e] / 1e6);
    printf("\n");
    return 0;
}
