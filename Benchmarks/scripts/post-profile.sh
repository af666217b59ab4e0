#!/usr/bin/env bash
# Issue 30: where a durable post's CPU goes at full rate, side by side for the floor and feedback-host builds
# (docs/BENCHMARKS.md, "Session 42"). callgrind (`post-instructions.sh`) counts instructions at a thousand posts a
# second, where a group commit carries a post or two; this samples the server's core while it answers as fast as it
# can, so the kernel's share, the idle time and the commit's cost spread over a full group are the shipped rates'.
# For each server named: a fresh process in an empty directory on SERVER_CPU, SESSIONS counter sessions, `wrk -t1
# -cCONNECTIONS` posting {"type":"increment"} round-robin on LOAD_CPU, and over WINDOW seconds in the middle of the run
# `perf record -e cpu-clock` of the whole core (every thread and the kernel's work on it, at FREQUENCY samples a
# second); the window's answers are wrk's rate times WINDOW (a send(2) count by tracepoint would slow the server).
# Prints the microseconds of the core a post, split: the server's threads, each as kernel and user time (its main
# thread; the others named as the process: feedback-host's shards, the floor's writer, which also sends the answers;
# those named otherwise: Dispatch's, where feedback-host's journal writer runs); user time by library; for a
# feedback-host binary, its own code by Swift module; idle; and what else ran on the core. Needs root (perf).
# Servers: `floor` (JournalFloor), or a feedback-host binary followed by its flags up to the next `--`.
# Usage: scripts/post-profile.sh floor -- BINARY -- BINARY --data-dir none
#        (SERVER_CPU=0 LOAD_CPU=1 CONNECTIONS=64 SESSIONS=64 WINDOW=4 FREQUENCY=4999 PORT=18583 KEEP=). Copy binaries
#        aside. KEEP=DIR keeps each recording as DIR/perf.NAME.data (`perf report -i`, `--sort pid,comm,dso,sym`).
set -euo pipefail
WINDOW=${WINDOW:-4}
FREQUENCY=${FREQUENCY:-4999}
PORT=${PORT:-18583}
KEEP=${KEEP:-}
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
command -v perf >/dev/null || { echo "perf is needed (apt-get install linux-perf)" >&2; exit 1; }
# shellcheck source=post-server.sh
source "$SCRIPTS/post-server.sh"

profile() { # floor|binary [flags...]
    local name posts
    name=$(server_name "$@")
    trap stop_post_server EXIT
    start_post_server post-profile "$@"
    start_post_load $((WINDOW + 3))
    sleep 1.5
    perf record -q -e cpu-clock -F "$FREQUENCY" -a -C "$SERVER_CPU" -o "$DIR/perf.data" -- sleep "$WINDOW" \
        >/dev/null 2>&1
    local threads process
    threads=$(ls "/proc/$PID/task" | tr '\n' ' ')
    process=$(cat "/proc/$PID/comm")
    wait "$LOAD"
    grep -q "Non-2xx" "$DIR/wrk.out" && echo "some answers were not 2xx: $*" >&2
    # The window's answers at the run's rate (wrk's; a count of send(2) by tracepoint would slow the server).
    posts=$(awk -v window="$WINDOW" '/Requests\/sec/ {printf "%d", $2 * window}' "$DIR/wrk.out")
    # One line a sample group: share, tid:thread name, thread name, library, [k] or [.], symbol. The server's threads
    # are its tasks (listed while it ran), told apart by name.
    perf report -i "$DIR/perf.data" --no-children -q -g none --sort pid,comm,dso,sym 2>/dev/null |
        awk -v pid="$PID" -v threads="$threads" -v posts="$posts" -v window="$WINDOW" -v name="$name" -v process="$process" '
        BEGIN { n = split(threads, list, " "); for (i = 1; i <= n; i++) ours[list[i]] = 1 }
        NF >= 6 {
            share = $1; sub("%", "", share)
            split($2, who, ":"); tid = who[1]
            thread = $3; dso = $4; symbol = $6
            if (tid == 0) { add("idle", share); next }
            if (!(tid in ours)) { add("other processes (kworkers, perf, ...)", share); next }
            part = (tid == pid ? "main thread" : (thread == process ? "other threads named as the process" : "threads named otherwise"))
            kernel = (dso == "[kernel.kallsyms]")
            add(part (kernel ? ": kernel" : ": user"), share)
            if (kernel) next
            add("user by library: " dso, share)
            if (symbol ~ /^\$s[0-9]+/) {
                match(symbol, /^\$s[0-9]+/)
                length_ = substr(symbol, 3, RLENGTH - 2) + 0
                module = substr(symbol, RLENGTH + 1, length_)
                if (dso != "[vdso]" && dso !~ /\.so/) add("user by Swift module: " module, share)
            }
        }
        function add(key, share) { total[key] += share }
        END {
            seconds = window
            if (posts == 0) { print name ": no answers"; exit 1 }
            printf "%s: %d answers in %d s (%.0f posts/s); microseconds of the core a post (%% of its time):\n",
                name, posts, window, posts / window
            n = 0
            for (key in total) keys[++n] = key
            # Sorted by group, then by size.
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) {
                gi = group(keys[i]); gj = group(keys[j])
                if (gj < gi || (gj == gi && total[keys[j]] > total[keys[i]])) { t = keys[i]; keys[i] = keys[j]; keys[j] = t }
            }
            for (i = 1; i <= n; i++) {
                if (total[keys[i]] < 0.1) continue
                printf "  %-58s %6.2f us  (%5.1f %%)\n", keys[i], total[keys[i]] / 100 * seconds * 1e6 / posts, total[keys[i]]
            }
        }
        function group(key) {
            if (key ~ /^main thread/) return 0
            if (key ~ /^other threads named as/) return 1
            if (key ~ /^threads named otherwise/) return 2
            if (key ~ /^user by library/) return 3
            if (key ~ /^user by Swift/) return 4
            return 5
        }'
    [ -z "$KEEP" ] || cp "$DIR/perf.data" "$KEEP/perf.$(basename "$1").data"
    stop_post_server
}
for_each_server profile "$@"
