// The floor of a durable posted event on this machine (issue 17): the least a server can do to answer
// `POST /v1/sessions/{id}/events` only once the event is in an fsynced SQLite journal, with nothing of ours
// around it. One thread reads requests from every connection through epoll; a second, the writer, takes every
// post that arrived since its last commit, inserts one `events` row each (the journal's own table shape, pragmas
// and statement: WAL, exclusive locking, `synchronous=FULL`), commits (SQLite's fsync of the WAL), then sends each
// post its answer itself. That is a group commit with no gathering window and no hop back to the reading thread.
// `GET /healthz` is answered at once by the reading thread. No JSON is parsed, no reducer runs, no state is encoded:
// the answer is the event's revision in a body the size of feedback-host's.
// With `--journal off` there is no database and no writer: the reading thread answers each post as it reads it (the
// same answer, its revision counted in memory), the floor of a post with nothing durable about it, to set beside
// feedback-host's `--data-dir none` (session 39: what the journal costs each, apart from what the rest costs).
//
// Usage: JournalFloor --port 18600 [--db floor.sqlite] [--synchronous FULL|OFF] [--journal on|off]
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS 4096
#define BUFFER 8192
#define ID_BYTES 64

typedef struct {
    char buffer[BUFFER];
    size_t used;
} connection_t;

typedef struct {
    int fd;
    char session[ID_BYTES];
    char event[256];
} post_t;

typedef struct {
    char id[ID_BYTES];
    int64_t rev;
} counter_t;

static connection_t *connections[MAX_FDS];
static post_t *queued, *taken;
static size_t n_queued, capacity = 1024;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t arrived = PTHREAD_COND_INITIALIZER;
static counter_t counters[4096];
static sqlite3 *db;
static sqlite3_stmt *insert;
static int journal = 1;

static void fail(const char *what) {
    perror(what);
    exit(1);
}

static void check(int rc, const char *what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static void http_date(char *out, size_t size) {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, size, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

static void send_all(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t n = send(fd, bytes, length, MSG_NOSIGNAL);
        if (n <= 0) return;  // the client went away; the reading thread closes it
        bytes += n;
        length -= (size_t)n;
    }
}

// The session's next revision: a small open-addressing table, touched only by the writer (by the reading thread
// without a journal).
static int64_t next_revision(const char *id) {
    uint64_t h = 1469598103934665603ull;
    for (const char *c = id; *c; c++) h = (h ^ (uint8_t)*c) * 1099511628211ull;
    for (size_t i = h % 4096;; i = (i + 1) % 4096) {
        if (counters[i].id[0] == 0) snprintf(counters[i].id, ID_BYTES, "%s", id);
        if (strcmp(counters[i].id, id) == 0) return ++counters[i].rev;
    }
}

// Sends a post its answer: the revision, as feedback-host's counter answers it, with `date` as its Date.
static void answer(int fd, int64_t revision, const char *date) {
    char body[128], text[512];
    int b = snprintf(body, sizeof body, "{\"rev\":%lld,\"cursor\":\"1382482198-%lld\",\"state\":{\"count\":%lld}}",
        (long long)revision, (long long)revision, (long long)revision);
    int a = snprintf(text, sizeof text,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nETag: \"1382482198-%lld\"\r\n"
        "Content-Length: %d\r\nDate: %s\r\n\r\n%s",
        (long long)revision, b, date, body);
    send_all(fd, text, (size_t)a);
}

static void *writer(void *unused) {
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (n_queued == 0) pthread_cond_wait(&arrived, &lock);
        post_t *posts = queued;
        size_t n = n_queued;
        queued = taken;
        taken = posts;
        n_queued = 0;
        pthread_mutex_unlock(&lock);

        int64_t revisions[n];
        check(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), "begin");
        int64_t at = (int64_t)time(NULL) * 1000;
        for (size_t i = 0; i < n; i++) {
            revisions[i] = next_revision(posts[i].session);
            sqlite3_bind_text(insert, 1, posts[i].session, -1, SQLITE_STATIC);
            sqlite3_bind_int64(insert, 2, revisions[i]);
            sqlite3_bind_int(insert, 3, 0);
            sqlite3_bind_text(insert, 4, posts[i].event, -1, SQLITE_STATIC);
            sqlite3_bind_int64(insert, 5, (int64_t)revisions[i] * 2654435761u);
            sqlite3_bind_int(insert, 6, 1);
            sqlite3_bind_int64(insert, 7, at);
            sqlite3_bind_int64(insert, 8, revisions[i] * 40503);
            check(sqlite3_step(insert), "insert");
            sqlite3_reset(insert);
        }
        check(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), "commit");
        char date[64];
        http_date(date, sizeof date);
        for (size_t i = 0; i < n; i++) answer(posts[i].fd, revisions[i], date);
    }
    return NULL;
}

// Handles every complete request in `c`; returns 0 to close the connection.
static int serve(int fd, connection_t *c) {
    for (;;) {
        char *end = memmem(c->buffer, c->used, "\r\n\r\n", 4);
        if (!end) return c->used < BUFFER;
        size_t head = (size_t)(end - c->buffer) + 4;
        if (c->used >= 12 && memcmp(c->buffer, "GET /healthz", 12) == 0) {
            char date[64], answer[256];
            http_date(date, sizeof date);
            int a = snprintf(answer, sizeof answer,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\nDate: %s\r\n\r\n"
                "{\"status\":\"ok\"}", date);
            send_all(fd, answer, (size_t)a);
            memmove(c->buffer, c->buffer + head, c->used - head);
            c->used -= head;
            continue;
        }
        const char *prefix = "POST /v1/sessions/";
        if (strncmp(c->buffer, prefix, strlen(prefix)) != 0) return 0;
        char *length = memmem(c->buffer, head, "Content-Length: ", 16);
        if (!length) return 0;
        size_t body = strtoul(length + 16, NULL, 10);
        if (head + body > c->used) return head + body <= BUFFER;
        post_t post = {.fd = fd};
        char *id = c->buffer + strlen(prefix);
        char *slash = memchr(id, '/', (size_t)(end - id));
        if (!slash || slash - id >= ID_BYTES || body >= sizeof post.event) return 0;
        memcpy(post.session, id, (size_t)(slash - id));
        memcpy(post.event, c->buffer + head, body);
        if (journal) {
            pthread_mutex_lock(&lock);
            if (n_queued == capacity) {
                fprintf(stderr, "more posts in flight than %zu\n", capacity);
                exit(1);
            }
            queued[n_queued++] = post;
            pthread_cond_signal(&arrived);
            pthread_mutex_unlock(&lock);
        } else {
            // The Date made once a second, as a server's cache of it does.
            static char date[64];
            static time_t dated = 0;
            time_t now = time(NULL);
            if (now != dated) {
                http_date(date, sizeof date);
                dated = now;
            }
            answer(fd, next_revision(post.session), date);
        }
        memmove(c->buffer, c->buffer + head + body, c->used - head - body);
        c->used -= head + body;
    }
}

// Opens the journal (the table, pragmas and statement of feedback-host's) and starts its writer.
static void start_journal(const char *path, const char *synchronous) {
    queued = calloc(capacity, sizeof(post_t));
    taken = calloc(capacity, sizeof(post_t));
    if (sqlite3_open(path, &db) != SQLITE_OK) fail("sqlite3_open");
    char pragmas[512];
    snprintf(pragmas, sizeof pragmas,
        "PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = %s; "
        "PRAGMA wal_autocheckpoint = 1000; "
        "CREATE TABLE IF NOT EXISTS events(seq INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, "
        "rev INTEGER NOT NULL, origin INTEGER NOT NULL, event TEXT NOT NULL, crc INTEGER NOT NULL, "
        "version INTEGER, at INTEGER, state_sum INTEGER);", synchronous);
    check(sqlite3_exec(db, pragmas, NULL, NULL, NULL), "schema");
    check(sqlite3_prepare_v2(db,
              "INSERT INTO events(session, rev, origin, event, crc, version, at, state_sum) "
              "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", -1, &insert, NULL), "prepare");
    pthread_t thread;
    pthread_create(&thread, NULL, writer, NULL);
}

int main(int argc, char **argv) {
    int port = 18600;
    const char *path = "floor.sqlite", *synchronous = "FULL";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--port") == 0) port = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--db") == 0) path = argv[i + 1];
        else if (strcmp(argv[i], "--synchronous") == 0) synchronous = argv[i + 1];
        else if (strcmp(argv[i], "--journal") == 0) journal = strcmp(argv[i + 1], "off") != 0;
        else { fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
    }
    signal(SIGPIPE, SIG_IGN);
    if (journal) start_journal(path, synchronous);

    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) < 0) fail("bind");
    if (listen(listener, 1024) < 0) fail("listen");
    int poller = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(poller, EPOLL_CTL_ADD, listener, &event);
    fprintf(stderr, "JournalFloor on 127.0.0.1:%d, %s, synchronous=%s%s\n", port, path, synchronous,
        journal ? "" : ", no journal");
    struct epoll_event ready[256];
    for (;;) {
        int n = epoll_wait(poller, ready, 256, -1);
        for (int i = 0; i < n; i++) {
            int fd = ready[i].data.fd;
            if (fd == listener) {
                int client;
                while ((client = accept4(listener, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (client >= MAX_FDS) { close(client); continue; }
                    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    connections[client] = calloc(1, sizeof(connection_t));
                    struct epoll_event e = {.events = EPOLLIN, .data.fd = client};
                    epoll_ctl(poller, EPOLL_CTL_ADD, client, &e);
                }
                continue;
            }
            connection_t *c = connections[fd];
            ssize_t got = recv(fd, c->buffer + c->used, BUFFER - c->used, 0);
            if (got > 0) c->used += (size_t)got;
            if (got == 0 || (got < 0 && errno != EAGAIN) || !serve(fd, c)) {
                // A post of this connection may still be in the writer's hands: its send then fails or reaches
                // a later connection on the same descriptor; a floor accepts that (wrk closes only at the end).
                epoll_ctl(poller, EPOLL_CTL_DEL, fd, NULL);
                free(c);
                connections[fd] = NULL;
                close(fd);
            }
        }
    }
}
