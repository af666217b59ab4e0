#!/usr/bin/env bash
# Issue 30: how much a rate on this machine moves within seconds (docs/BENCHMARKS.md, "Session 34"). With one server:
# a fresh process (as post-server.sh starts it) under RUNS back-to-back runs of `wrk -t1 -cCONNECTIONS -dSECONDS_EACH`
# posting {"type":"increment"} round-robin to its SESSIONS sessions, each run's rate and the server's directory size
# (its journal, and with the shipped defaults its access log in the stderr file). With two: both started side by side
# on SERVER_CPU, idle in turn while the load alternates between them, the order switched every pair, each pair's rates
# and the second's over the first's: what `defaults-bench.sh`'s ratio is made of, taken seconds apart instead of tens.
# Servers: `floor` (JournalFloor), or a feedback-host binary followed by its flags up to the next `--`.
# Usage: scripts/post-moments.sh floor -- BINARY   or   scripts/post-moments.sh BINARY [FLAGS...]
#        (RUNS=10 SECONDS_EACH=3 SERVER_CPU=0 LOAD_CPU=1 CONNECTIONS=64 SESSIONS=64 PORT=18611). Copy binaries aside.
set -euo pipefail
RUNS=${RUNS:-10}
SECONDS_EACH=${SECONDS_EACH:-3}
FIRST_PORT=${PORT:-18611}
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=post-server.sh
source "$SCRIPTS/post-server.sh"

PIDS=()
DIRS=()
PORTS=()
NAMES=()
stop_all() {
    for index in "${!PIDS[@]}"; do
        PID=${PIDS[$index]} DIR=${DIRS[$index]}
        stop_post_server
    done
}
trap stop_all EXIT

start() { # floor|binary [flags...]
    PORT=$((FIRST_PORT + ${#PIDS[@]}))
    start_post_server "post-moments" "$@"
    PIDS+=("$PID") DIRS+=("$DIR") PORTS+=("$PORT") NAMES+=("$(server_name "$@")")
}

rate() { # index: one run against that server, its posts a second
    PORT=${PORTS[$1]} DIR=${DIRS[$1]}
    start_post_load "$SECONDS_EACH"
    wait "$LOAD"
    grep -q "Non-2xx" "$DIR/wrk.out" && echo "some answers were not 2xx: ${NAMES[$1]}" >&2
    awk '/Requests\/sec/ {printf "%.0f", $2}' "$DIR/wrk.out"
}

# The least, the median and the largest of FILE's column COLUMN (0: the last).
summary() { # file column label
    awk -v c="$2" '{ print (c > 0 ? $c : $NF) }' "$1" | sort -n | awk -v label="$3" '{ v[NR] = $1 }
        END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf "%s: least %s, median %s, largest %s over %d runs\n", label, v[1], m, v[NR], NR }'
}

for_each_server start "$@"
case ${#PIDS[@]} in
1)
    echo "${NAMES[0]}: $RUNS runs of ${SECONDS_EACH}s back to back"
    for run in $(seq "$RUNS"); do
        echo "$run $(rate 0) posts/s  directory $(du -sk "${DIRS[0]}" | cut -f1) KiB"
    done | tee "${DIRS[0]}/runs"
    summary "${DIRS[0]}/runs" 2 "posts/s"
    ;;
2)
    echo "${NAMES[0]} and ${NAMES[1]}: $RUNS pairs of ${SECONDS_EACH}s runs, alternating"
    for run in $(seq "$RUNS"); do
        if [ $((run % 2)) = 1 ]; then
            first=$(rate 0) second=$(rate 1)
        else
            second=$(rate 1) first=$(rate 0)
        fi
        awk -v r="$run" -v a="$first" -v b="$second" -v n="${NAMES[1]}" -v m="${NAMES[0]}" \
            'BEGIN { printf "%d %s %d  %s %d  ratio %.3f\n", r, m, a, n, b, b / a }'
    done | tee "${DIRS[0]}/runs"
    summary "${DIRS[0]}/runs" 0 "ratio"
    ;;
*)
    echo "one server or two" >&2
    exit 2
    ;;
esac
