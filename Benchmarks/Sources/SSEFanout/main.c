// SSE fan-out load client: N subscribers to one counter session's stream, M posted events, post-to-receive
// latency per (event, subscriber), events lost and conflated, and the server's RSS per idle stream.
//
// One thread, one epoll instance, non-blocking sockets: the subscribers and the one keep-alive connection that
// posts the events are all served by the same loop, so nothing needs a lock. The post time of event i is taken
// right before its request is written; a subscriber's latency for event i is the time at which the recv that
// completed the frame carrying rev base+i returned. Works with any server that speaks FeedbackHost's wire format
// (`event: snapshot`, `id: {epoch}-{rev}`, `data: {"rev":R,...}`), with a chunked or a close-delimited body.
//
// Usage: SSEFanout --port P [--host 127.0.0.1] [--pid SERVER_PID] [--subscribers N] [--events M]
//                  [--interval-ms 20] [--batch 200] [--label NAME] [--settle-ms 500] [--per-event 1]
// Prints a human summary and one `RESULT key=value ...` line; exits 1 when the run could not be completed.
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
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LINE_CAP 256
#define POSTER UINT32_MAX

enum body_mode { HEAD, CHUNK_SIZE, CHUNK_DATA, CHUNK_CRLF, RAW, DONE };

// One subscriber: its socket, the HTTP and SSE parser states, and what it saw.
typedef struct {
    int fd;
    uint8_t mode;
    uint8_t chunked;
    uint8_t ok_status;
    uint8_t closed;
    uint32_t chunk_left;
    int64_t last_rev;     // -1 before the first snapshot
    int64_t frame_rev;    // rev of the frame being parsed, -1 when none
    uint16_t line_len;
    uint16_t head_match;  // bytes of "\r\n\r\n" matched at the end of the head
    char line[LINE_CAP];
} subscriber_t;

static const char *host = "127.0.0.1";
static int port = 0;
static int server_pid = 0;
static long n_subs = 1000;
static long n_events = 100;
static long interval_ms = 20;
static long batch = 200;
static long settle_ms = 500;
static const char *label = "server";

static subscriber_t *subs;
static int64_t base_rev;          // the rev of the first snapshot every subscriber saw
static int64_t *post_ns;          // send time of event i
// Per event: when its post was answered and when its first frame reached any subscriber (ns after the post). The
// fan-out's own spread is a frame's latency minus its event's first; what comes before the first frame is the post's
// way through the server (with a journal, its commit), which a loop that only sends (LoopbackFloor) does not have.
static int64_t *answer_ns, *first_ns;
static int64_t *latencies;        // ns, one per (event, subscriber) received with a matching rev
static long n_latencies;
// Per event, the latest of its frames (ns after its post): with --per-event 1, printed event by event, to find the
// events that make the p99 (one slow event of 20 holds 5 % of the latencies).
static int64_t *last_ns;
static int per_event = 0;
// ns, one per (event, subscriber) reflected: the time until the subscriber had that state or a later one. A
// conflated state counts with the arrival of the state that replaced it, so skipping states cannot flatter it.
static int64_t *reflected;
static long n_reflected;
static long first_snapshots, conflated, duplicates, closed_early, bad_status;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what) {
    fprintf(stderr, "SSEFanout (%s): %s: %s\n", label, what, strerror(errno));
    exit(1);
}

static long rss_kib(void) {
    if (server_pid <= 0) return -1;
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", server_pid);
    FILE *file = fopen(path, "r");
    if (!file) return -1;
    long kib = -1;
    while (fgets(line, sizeof line, file)) {
        if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
    }
    fclose(file);
    return kib;
}

// The server's user + system CPU time so far, in nanoseconds (-1 without --pid).
static int64_t server_cpu_ns(void) {
    if (server_pid <= 0) return -1;
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", server_pid);
    FILE *file = fopen(path, "r");
    if (!file) return -1;
    char *read = fgets(line, sizeof line, file);
    fclose(file);
    char *fields = read ? strrchr(line, ')') : NULL;  // the command name may hold spaces
    unsigned long utime = 0, stime = 0;
    if (!fields || sscanf(fields + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) {
        return -1;
    }
    return (int64_t)(utime + stime) * (1000000000 / sysconf(_SC_CLK_TCK));
}

// This process's own user + system CPU time so far, in nanoseconds.
static int64_t own_cpu_ns(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return ((int64_t)usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000000
        + ((int64_t)usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000;
}

static int connect_blocking(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) die("socket");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, host, &address.sin_addr);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void close_now(int fd) {  // RST instead of TIME_WAIT: thousands of runs must not exhaust local ports
    struct linger linger = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, sizeof linger);
    close(fd);
}

static void send_all(int fd, const char *data, size_t length) {
    while (length > 0) {
        ssize_t n = send(fd, data, length, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("send");
        data += n;
        length -= (size_t)n;
    }
}

// Reads one HTTP response with a Content-Length body from a blocking socket. Returns the status; body in `body`.
static int read_response(int fd, char *body, size_t cap) {
    static char buffer[65536];
    size_t used = 0;
    char *head_end = NULL;
    while (!head_end) {
        ssize_t n = recv(fd, buffer + used, sizeof buffer - 1 - used, 0);
        if (n <= 0) die("recv (response head)");
        used += (size_t)n;
        buffer[used] = 0;
        head_end = strstr(buffer, "\r\n\r\n");
    }
    int status = atoi(buffer + 9);
    char *length_header = strcasestr(buffer, "\ncontent-length:");
    if (!length_header || length_header > head_end) {
        fprintf(stderr, "SSEFanout (%s): a response without Content-Length\n", label);
        exit(1);
    }
    size_t length = strtoul(length_header + 16, NULL, 10);
    size_t head = (size_t)(head_end + 4 - buffer);
    while (used < head + length) {
        ssize_t n = recv(fd, buffer + used, sizeof buffer - 1 - used, 0);
        if (n <= 0) die("recv (response body)");
        used += (size_t)n;
    }
    size_t copy = length < cap - 1 ? length : cap - 1;
    memcpy(body, buffer + head, copy);
    body[copy] = 0;
    return status;
}

static int64_t json_rev(const char *text) {
    const char *rev = strstr(text, "\"rev\":");
    return rev ? strtoll(rev + 6, NULL, 10) : -1;
}

static void dispatch_frame(subscriber_t *s, int64_t at) {
    int64_t rev = s->frame_rev;
    s->frame_rev = -1;
    if (rev < 0) return;
    if (s->last_rev < 0) {
        s->last_rev = rev;
        first_snapshots++;
        return;
    }
    if (rev <= s->last_rev) {
        duplicates++;
        return;
    }
    conflated += rev - s->last_rev - 1;
    for (int64_t covered = s->last_rev + 1; covered <= rev; covered++) {
        int64_t covered_event = covered - base_rev - 1;
        if (covered_event >= 0 && covered_event < n_events && post_ns[covered_event] > 0) {
            reflected[n_reflected++] = at - post_ns[covered_event];
        }
    }
    s->last_rev = rev;
    int64_t event = rev - base_rev - 1;
    if (event >= 0 && event < n_events && post_ns[event] > 0) {
        latencies[n_latencies++] = at - post_ns[event];
        if (at - post_ns[event] > last_ns[event]) last_ns[event] = at - post_ns[event];
        if (first_ns[event] == 0 || at - post_ns[event] < first_ns[event]) first_ns[event] = at - post_ns[event];
    }
}

static void sse_line(subscriber_t *s, int64_t at) {
    s->line[s->line_len < LINE_CAP ? s->line_len : LINE_CAP - 1] = 0;
    if (s->line_len == 0) {
        dispatch_frame(s, at);
    } else if (strncmp(s->line, "data:", 5) == 0) {
        int64_t rev = json_rev(s->line);
        if (rev >= 0) s->frame_rev = rev;
    }
    s->line_len = 0;
}

static void sse_bytes(subscriber_t *s, const char *data, size_t length, int64_t at) {
    for (size_t i = 0; i < length; i++) {
        char c = data[i];
        if (c == '\n') {
            if (s->line_len > 0 && s->line_len <= LINE_CAP && s->line[s->line_len - 1] == '\r') s->line_len--;
            sse_line(s, at);
        } else if (s->line_len < LINE_CAP) {
            s->line[s->line_len++] = c;
        } else {
            s->line_len = LINE_CAP;  // keep the prefix; the rev is near the start
        }
    }
}

// Feeds received bytes through the HTTP head, the chunked decoder and the SSE parser.
static void feed(subscriber_t *s, const char *data, size_t length, int64_t at) {
    size_t i = 0;
    while (i < length) {
        switch (s->mode) {
        case HEAD: {
            char c = data[i++];
            if (s->line_len < LINE_CAP - 1) s->line[s->line_len++] = c;
            if (c == '\n') {  // one header line: check the status and the transfer coding
                s->line[s->line_len] = 0;
                if (strncmp(s->line, "HTTP/1.", 7) == 0) s->ok_status = atoi(s->line + 9) == 200;
                if (strncasecmp(s->line, "transfer-encoding:", 18) == 0 && strcasestr(s->line, "chunked"))
                    s->chunked = 1;
                int blank = strcmp(s->line, "\r\n") == 0 || strcmp(s->line, "\n") == 0;
                s->line_len = 0;
                if (blank) {
                    if (!s->ok_status) bad_status++;
                    s->mode = s->chunked ? CHUNK_SIZE : RAW;
                }
            }
            break;
        }
        case CHUNK_SIZE: {
            char c = data[i++];
            if (c == '\n') {
                s->mode = s->chunk_left == 0 ? DONE : CHUNK_DATA;
                s->head_match = 0;
            } else if (!s->head_match) {
                int digit = (c >= '0' && c <= '9') ? c - '0'
                    : (c >= 'a' && c <= 'f')       ? c - 'a' + 10
                    : (c >= 'A' && c <= 'F')       ? c - 'A' + 10
                                                   : -1;
                if (digit >= 0) s->chunk_left = s->chunk_left * 16 + (uint32_t)digit;
                else s->head_match = 1;  // ';' extension or '\r': the size has ended
            }
            break;
        }
        case CHUNK_DATA: {
            size_t take = length - i < s->chunk_left ? length - i : s->chunk_left;
            sse_bytes(s, data + i, take, at);
            i += take;
            s->chunk_left -= (uint32_t)take;
            if (s->chunk_left == 0) s->mode = CHUNK_CRLF;
            break;
        }
        case CHUNK_CRLF:
            if (data[i++] == '\n') {
                s->mode = CHUNK_SIZE;
                s->chunk_left = 0;
                s->head_match = 0;
            }
            break;
        case RAW:
            sse_bytes(s, data + i, length - i, at);
            i = length;
            break;
        case DONE:
            i = length;
            break;
        }
    }
}

static char recv_buffer[1 << 16];

static void subscriber_readable(int epoll_fd, subscriber_t *s) {
    for (;;) {
        ssize_t n = recv(s->fd, recv_buffer, sizeof recv_buffer, 0);
        if (n > 0) {
            feed(s, recv_buffer, (size_t)n, now_ns());
            if ((size_t)n < sizeof recv_buffer) return;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, s->fd, NULL);
        s->closed = 1;
        closed_early++;
        return;
    }
}

// The poster: one keep-alive connection, at most one request in flight.
static int poster_fd = -1;
static long posted, answered, post_errors;
static int64_t next_post_at;
static char poster_buffer[8192];
static size_t poster_used;
static char post_request[512];
static size_t post_request_length;

static void poster_readable(void) {
    for (;;) {
        ssize_t n = recv(poster_fd, poster_buffer + poster_used, sizeof poster_buffer - 1 - poster_used, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        if (n <= 0) die("the posting connection closed");
        poster_used += (size_t)n;
        poster_buffer[poster_used] = 0;
        char *head_end = strstr(poster_buffer, "\r\n\r\n");
        if (!head_end) continue;
        char *length_header = strcasestr(poster_buffer, "\ncontent-length:");
        size_t length = length_header ? strtoul(length_header + 16, NULL, 10) : 0;
        size_t total = (size_t)(head_end + 4 - poster_buffer) + length;
        if (poster_used < total) continue;
        int status = atoi(poster_buffer + 9);
        int64_t rev = json_rev(head_end + 4);
        if (status != 200 || rev != base_rev + answered + 1) {
            post_errors++;
            fprintf(stderr, "post %ld answered %d rev %lld\n", answered, status, (long long)rev);
        }
        if (answered < n_events && post_ns[answered] > 0) answer_ns[answered] = now_ns() - post_ns[answered];
        answered++;
        memmove(poster_buffer, poster_buffer + total, poster_used - total);
        poster_used -= total;
        return;
    }
}

static void post_next(int64_t at) {
    post_ns[posted] = at;
    send_all(poster_fd, post_request, post_request_length);
    posted++;
    next_post_at = at + interval_ms * 1000000;
}

static int all_first(long upto) {
    return first_snapshots + closed_early + bad_status >= upto;
}

static void pump(int epoll_fd, int timeout_ms) {
    static struct epoll_event events[1024];
    int n = epoll_wait(epoll_fd, events, 1024, timeout_ms);
    if (n < 0 && errno != EINTR) die("epoll_wait");
    for (int i = 0; i < n; i++) {
        uint32_t index = events[i].data.u32;
        if (index == POSTER) poster_readable();
        else subscriber_readable(epoll_fd, &subs[index]);
    }
}

static int compare(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double percentile_of(const int64_t *sorted, long count, double p) {
    if (count == 0) return -1;
    long index = (long)(p * (double)(count - 1) + 0.5);
    return (double)sorted[index] / 1e6;
}

static double percentile_ms(double p) { return percentile_of(latencies, n_latencies, p); }

// The median of the per-event times that were taken (0: the post was never answered, or no frame of it arrived).
static double nonzero_median_ms(int64_t *values, long n) {
    long taken = 0;
    for (long i = 0; i < n; i++) if (values[i] > 0) values[taken++] = values[i];
    qsort(values, (size_t)taken, sizeof *values, compare);
    return percentile_of(values, taken, 0.5);
}
static double reflected_ms(double p) { return percentile_of(reflected, n_reflected, p); }

static void parse_arguments(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *key = argv[i], *value = argv[i + 1];
        if (!strcmp(key, "--host")) host = value;
        else if (!strcmp(key, "--port")) port = atoi(value);
        else if (!strcmp(key, "--pid")) server_pid = atoi(value);
        else if (!strcmp(key, "--subscribers")) n_subs = atol(value);
        else if (!strcmp(key, "--events")) n_events = atol(value);
        else if (!strcmp(key, "--interval-ms")) interval_ms = atol(value);
        else if (!strcmp(key, "--batch")) batch = atol(value);
        else if (!strcmp(key, "--settle-ms")) settle_ms = atol(value);
        else if (!strcmp(key, "--label")) label = value;
        else if (!strcmp(key, "--per-event")) per_event = atoi(value);
        else {
            fprintf(stderr, "unknown option %s\n", key);
            exit(2);
        }
    }
    if (port <= 0 || n_subs <= 0 || n_events <= 0 || batch <= 0) {
        fprintf(stderr, "usage: SSEFanout --port P [--pid PID] [--subscribers N] [--events M] [--interval-ms 20]\n");
        exit(2);
    }
}

static void create_session(char *id, size_t cap) {
    int fd = connect_blocking();
    const char *body = "{\"system\":\"counter\"}";
    char request[512];
    int length = snprintf(request, sizeof request,
        "POST /v1/sessions HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
        "Content-Length: %zu\r\n\r\n%s", host, port, strlen(body), body);
    send_all(fd, request, (size_t)length);
    char answer[4096];
    int status = read_response(fd, answer, sizeof answer);
    close_now(fd);
    char *start = strstr(answer, "\"id\":\"");
    if (status != 201 || !start) {
        fprintf(stderr, "SSEFanout (%s): creating the session answered %d %s\n", label, status, answer);
        exit(1);
    }
    start += 6;
    size_t n = strcspn(start, "\"");
    if (n >= cap) n = cap - 1;
    memcpy(id, start, n);
    id[n] = 0;
}

int main(int argc, char **argv) {
    parse_arguments(argc, argv);
    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    if ((rlim_t)n_subs + 64 > limit.rlim_cur) {
        fprintf(stderr, "SSEFanout: %ld subscribers need more than `ulimit -n` %llu descriptors\n", n_subs,
            (unsigned long long)limit.rlim_cur);
        return 1;
    }
    subs = calloc((size_t)n_subs, sizeof *subs);
    post_ns = calloc((size_t)n_events, sizeof *post_ns);
    answer_ns = calloc((size_t)n_events, sizeof *answer_ns);
    first_ns = calloc((size_t)n_events, sizeof *first_ns);
    last_ns = calloc((size_t)n_events, sizeof *last_ns);
    latencies = malloc((size_t)n_subs * (size_t)n_events * sizeof *latencies);
    reflected = malloc((size_t)n_subs * (size_t)n_events * sizeof *reflected);
    if (!subs || !post_ns || !answer_ns || !first_ns || !last_ns || !latencies || !reflected) die("malloc");

    char id[128];
    create_session(id, sizeof id);
    char request[512];
    int request_length = snprintf(request, sizeof request,
        "GET /v1/sessions/%s/stream HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n\r\n", id, host, port);
    const char *event = "{\"type\":\"increment\"}";
    post_request_length = (size_t)snprintf(post_request, sizeof post_request,
        "POST /v1/sessions/%s/events HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
        "Content-Length: %zu\r\n\r\n%s", id, host, port, strlen(event), event);

    int epoll_fd = epoll_create1(0);
    if (epoll_fd < 0) die("epoll_create1");
    usleep((useconds_t)settle_ms * 1000);
    long rss_before = rss_kib();

    // Open the subscribers in batches; each batch waits for its first snapshots, so the accept queue stays short.
    int64_t open_started = now_ns();
    for (long opened = 0; opened < n_subs;) {
        long upto = opened + batch < n_subs ? opened + batch : n_subs;
        for (; opened < upto; opened++) {
            subscriber_t *s = &subs[opened];
            s->fd = connect_blocking();
            s->last_rev = -1;
            s->frame_rev = -1;
            send_all(s->fd, request, (size_t)request_length);
            fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
            struct epoll_event interest = {.events = EPOLLIN, .data.u32 = (uint32_t)opened};
            if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, s->fd, &interest) != 0) die("epoll_ctl");
        }
        int64_t deadline = now_ns() + 10000000000LL;
        while (!all_first(upto) && now_ns() < deadline) pump(epoll_fd, 100);
        if (!all_first(upto)) {
            fprintf(stderr, "SSEFanout (%s): only %ld of %ld subscribers got a first snapshot within 10 s\n", label,
                first_snapshots, upto);
            return 1;
        }
    }
    double open_s = (double)(now_ns() - open_started) / 1e9;
    if (closed_early || bad_status) {
        fprintf(stderr, "SSEFanout (%s): %ld subscribers refused (%ld closed, %ld not 200)\n", label,
            closed_early + bad_status, closed_early, bad_status);
        return 1;
    }
    base_rev = subs[0].last_rev;
    for (long i = 1; i < n_subs; i++) {
        if (subs[i].last_rev != base_rev) {
            fprintf(stderr, "SSEFanout (%s): first snapshots disagree (%lld vs %lld)\n", label,
                (long long)subs[i].last_rev, (long long)base_rev);
            return 1;
        }
    }
    int64_t idle_until = now_ns() + settle_ms * 1000000;
    while (now_ns() < idle_until) pump(epoll_fd, 50);
    long rss_after = rss_kib();

    // Post the events, one in flight, spaced by the interval; keep reading the subscribers meanwhile.
    poster_fd = connect_blocking();
    fcntl(poster_fd, F_SETFL, fcntl(poster_fd, F_GETFL) | O_NONBLOCK);
    struct epoll_event poster_interest = {.events = EPOLLIN, .data.u32 = POSTER};
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, poster_fd, &poster_interest) != 0) die("epoll_ctl (poster)");
    int64_t server_cpu_before = server_cpu_ns(), client_cpu_before = own_cpu_ns();
    next_post_at = now_ns();
    int64_t final_rev = base_rev + n_events;
    int64_t deadline = 0;
    for (;;) {
        int64_t now = now_ns();
        if (posted < n_events && answered == posted && now >= next_post_at) {
            post_next(now);
            continue;
        }
        if (posted == n_events && answered == n_events) {
            if (deadline == 0) deadline = now + 5000000000LL;  // the last frames may still be on their way
            long behind = 0;
            for (long i = 0; i < n_subs; i++) behind += !subs[i].closed && subs[i].last_rev < final_rev;
            if (behind == 0 || now >= deadline) break;
        }
        int timeout = 10;
        if (posted < n_events && answered == posted) {
            int64_t wait = (next_post_at - now) / 1000000;
            timeout = wait < 0 ? 0 : (int)wait;
        }
        pump(epoll_fd, timeout);
    }

    int64_t server_cpu_after = server_cpu_ns(), client_cpu_after = own_cpu_ns();
    // CPU per delivered frame while the events flowed: the part of the latency that is work, not waiting.
    double deliveries = (double)(n_latencies > 0 ? n_latencies : 1);
    double server_us = server_cpu_before >= 0 && server_cpu_after >= 0
        ? (double)(server_cpu_after - server_cpu_before) / 1e3 / deliveries : -1;
    double client_us = (double)(client_cpu_after - client_cpu_before) / 1e3 / deliveries;
    long lost = 0, short_subscribers = 0;
    for (long i = 0; i < n_subs; i++) {
        if (subs[i].last_rev < final_rev) {
            lost += final_rev - subs[i].last_rev;
            short_subscribers++;
        }
    }
    for (long i = 0; i < n_subs; i++) close_now(subs[i].fd);
    close_now(poster_fd);
    qsort(latencies, (size_t)n_latencies, sizeof *latencies, compare);
    qsort(reflected, (size_t)n_reflected, sizeof *reflected, compare);
    double bytes_per_stream = rss_before >= 0 && rss_after >= 0 ? (double)(rss_after - rss_before) * 1024 / (double)n_subs : -1;
    printf("%s: %ld subscribers (opened in %.2f s), %ld events every %ld ms; %ld latencies of %ld expected\n", label,
        n_subs, open_s, n_events, interval_ms, n_latencies, n_subs * n_events);
    printf("  post-to-receive p50 %.2f ms  p99 %.2f ms  max %.2f ms (the states received)\n", percentile_ms(0.5),
        percentile_ms(0.99), percentile_ms(1.0));
    printf("  post-to-reflect p50 %.2f ms  p99 %.2f ms  max %.2f ms (every state, until it or a later one arrived; "
           "%ld of %ld)\n", reflected_ms(0.5), reflected_ms(0.99), reflected_ms(1.0), n_reflected, n_subs * n_events);
    if (per_event) {
        for (long i = 0; i < n_events; i++) {
            printf("  event %ld: answered %.2f ms, first frame %.2f ms, last frame %.2f ms\n", i, answer_ns[i] / 1e6,
                first_ns[i] / 1e6, last_ns[i] / 1e6);
        }
    }
    double answer_ms = nonzero_median_ms(answer_ns, n_events), first_ms = nonzero_median_ms(first_ns, n_events);
    double last_ms = nonzero_median_ms(last_ns, n_events);
    printf("  per event (medians): post answered after %.2f ms, its first frame received after %.2f ms, its last after "
           "%.2f ms\n", answer_ms, first_ms, last_ms);
    printf("  lost %ld (%ld subscribers short of the last rev), conflated %ld, duplicates %ld, closed %ld, "
           "post errors %ld\n", lost, short_subscribers, conflated, duplicates, closed_early, post_errors);
    printf("  server RSS %ld KiB -> %ld KiB with the idle streams = %.0f bytes per stream\n", rss_before, rss_after,
        bytes_per_stream);
    printf("  CPU per delivered frame while the events flowed: server %.2f us, this client %.2f us\n", server_us,
        client_us);
    printf("RESULT label=%s subscribers=%ld events=%ld p50_ms=%.3f p99_ms=%.3f max_ms=%.3f lost=%ld conflated=%ld "
           "duplicates=%ld closed=%ld post_errors=%ld rss_before_kib=%ld rss_after_kib=%ld bytes_per_stream=%.0f "
           "server_cpu_us=%.3f client_cpu_us=%.3f reflect_p50_ms=%.3f reflect_p99_ms=%.3f reflect_max_ms=%.3f answer_ms=%.3f first_ms=%.3f last_ms=%.3f\n",
        label, n_subs, n_events, percentile_ms(0.5), percentile_ms(0.99), percentile_ms(1.0), lost, conflated,
        duplicates, closed_early, post_errors, rss_before, rss_after, bytes_per_stream, server_us, client_us,
        reflected_ms(0.5), reflected_ms(0.99), reflected_ms(1.0), answer_ms, first_ms, last_ms);
    return post_errors == 0 ? 0 : 1;
}
