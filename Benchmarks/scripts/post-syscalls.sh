#!/usr/bin/env bash
# Issue 30: the system calls and context switches one posted event costs a server's core, side by side for the floor
# and feedback-host builds (docs/BENCHMARKS.md, "Session 32", 2026-12-01): what `post-anatomy.sh`'s kernel time a post is made of.
# For each server named: a fresh process in an empty directory on SERVER_CPU, SESSIONS counter sessions (the floor
# takes any path segment as a session), `wrk -t1 -cCONNECTIONS` posting {"type":"increment"} round-robin on LOAD_CPU,
# and over WINDOW seconds in the middle of the run every `syscalls:sys_enter_*` tracepoint and the context switches
# counted on SERVER_CPU (the whole core, not `-p PID`: a Dispatch thread started after perf attached, such as the
# journal's writer, would escape a count by process), divided by the window's answers (its send(2) calls). Prints the
# rate of the run (the tracepoints slow it: compare counts, not rates) and each count of at least 0.001 a post.
# Needs root (perf's tracepoints).
# Servers: `floor` (JournalFloor), or a feedback-host binary followed by its flags up to the next `--`.
# Usage: scripts/post-syscalls.sh floor -- BINARY -- BINARY --data-dir none
#        (SERVER_CPU=0 LOAD_CPU=1 CONNECTIONS=64 SESSIONS=64 WINDOW=3 PORT=18577). Copy binaries aside first.
set -euo pipefail
WINDOW=${WINDOW:-3}
PORT=${PORT:-18577}
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
command -v perf >/dev/null || { echo "perf is needed (apt-get install linux-perf)" >&2; exit 1; }
# shellcheck source=post-server.sh
source "$SCRIPTS/post-server.sh"

measure() { # command...: prints "posts/s", then "count name" lines a post
    trap stop_post_server EXIT
    start_post_server post-syscalls "$@"
    start_post_load $((WINDOW + 2))
    sleep 1
    perf stat -x, -e 'syscalls:sys_enter_*' -e context-switches -a -C "$SERVER_CPU" -o "$DIR/counts" \
        -- sleep "$WINDOW" >/dev/null 2>&1
    wait "$LOAD"
    grep -q "Non-2xx" "$DIR/wrk.out" && echo "some answers were not 2xx: $*" >&2
    awk '/Requests\/sec/ {print $2}' "$DIR/wrk.out"
    # perf's CSV: count, unit, event name. The answers are the window's sendto calls.
    awk -F, '$3 == "syscalls:sys_enter_sendto" {posts = $1} $1 ~ /^[0-9]+$/ {count[$3] = $1}
        END { for (name in count) if (posts > 0 && count[name] / posts >= 0.001) {
            short = name; sub(/^syscalls:sys_enter_/, "", short); printf "%.3f %s\n", count[name] / posts, short } }' \
        "$DIR/counts" | sort -rn
    stop_post_server
}

report() { # floor|binary [flags...]
    local rps count call
    {
        read -r rps
        printf '%s  posts/s %.0f  a post:' "$(server_name "$@")" "$rps"
        while read -r count call; do printf '  %s %s' "$call" "$count"; done
        printf '\n'
    } < <(measure "$@")
}
for_each_server report "$@"
