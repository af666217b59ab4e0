#!/usr/bin/env bash
# Issue 30: where a durable post's time goes at full rate, by component and inclusive (docs/BENCHMARKS.md, "Session
# 33"): what callgrind (one post or two a commit, no kernel) and a flat `perf` profile (no callers) cannot say. For
# each binary: a fresh server in an empty directory on SERVER_CPU with its flags (shipped defaults when none), SESSIONS
# counter sessions, `wrk -t1 -cCONNECTIONS` posting {"type":"increment"} round-robin on LOAD_CPU, and over WINDOW
# seconds in the middle of the run `perf record --call-graph dwarf` of the whole core at FREQUENCY; the samples are
# sorted by `post-components.py` into the post's parts (the shard's recv, parse, route, handler, reduce, recorder,
# answer and send; the writer's INSERT, COMMIT, compaction and hand-back; idle) with the microseconds a post each, from
# the run's rate. perf and its unwinding run on LOAD_CPU beside wrk, which slows the load a little: compare shares.
# Needs root (perf on a CPU).
# Usage: scripts/post-components.sh BINARY [flags] [-- BINARY [flags] ...]   (or `floor`: JournalFloor)
#        (SERVER_CPU=0 LOAD_CPU=1 CONNECTIONS=64 SESSIONS=64 WINDOW=3 FREQUENCY=999 PORT=18578 OTHER=0)
set -euo pipefail
WINDOW=${WINDOW:-3}
FREQUENCY=${FREQUENCY:-999}
PORT=${PORT:-18578}
OTHER=${OTHER:-0}
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
command -v perf >/dev/null || { echo "perf is needed (apt-get install linux-perf)" >&2; exit 1; }
# shellcheck source=post-server.sh
source "$SCRIPTS/post-server.sh"

measure() { # binary [flags...]
    trap stop_post_server EXIT
    start_post_server post-components "$@"
    start_post_load $((WINDOW + 4))
    sleep 2
    taskset -c "$LOAD_CPU" perf record -q --call-graph dwarf,16384 -F "$FREQUENCY" -a -C "$SERVER_CPU" \
        -o "$DIR/perf.data" -- sleep "$WINDOW" >/dev/null 2>&1
    wait "$LOAD"
    grep -q "Non-2xx" "$DIR/wrk.out" && echo "some answers were not 2xx: $*" >&2
    local rate
    rate=$(awk '/Requests\/sec/ {print $2}' "$DIR/wrk.out")
    echo "== $(server_name "$@")"
    taskset -c "$LOAD_CPU" perf script -i "$DIR/perf.data" -F comm,tid,ip,sym 2>/dev/null |
        python3 "$SCRIPTS/post-components.py" --rate "$rate" --other "$OTHER"
    stop_post_server
}

# Each server in a subshell of its own: its PID, directory and EXIT trap live there.
run() { (measure "$@"); }
for_each_server run "$@"
