#!/usr/bin/env bash
# Issue 30: how much a rate on this machine moves within seconds (docs/BENCHMARKS.md, "Session 34"). With one server:
# a fresh process (as post-server.sh starts it) under RUNS back-to-back runs of `wrk -t1 -cCONNECTIONS -dSECONDS_EACH`
# posting {"type":"increment"} round-robin to its SESSIONS sessions, each run's rate and the server's directory size
# (its journal, and with the shipped defaults its access log in the stderr file). With two: both started side by side
# on SERVER_CPU, idle in turn while the load alternates between them, the order switched every pair, each pair's rates
# and the second's over the first's: what `defaults-bench.sh`'s ratio is made of, taken seconds apart instead of tens.
# With FRESH=1 each run starts its server afresh (a new process in an empty directory, its sessions created) and
# measures its first SECONDS_EACH seconds, as `defaults-bench.sh` measures a round's events on a new journal.
# Servers: `floor` (JournalFloor), or a feedback-host binary followed by its flags up to the next `--`.
# Usage: scripts/post-moments.sh floor -- BINARY   or   scripts/post-moments.sh BINARY [FLAGS...]
#        (RUNS=10 SECONDS_EACH=3 FRESH=0 SERVER_CPU=0 LOAD_CPU=1 CONNECTIONS=64 SESSIONS=64 PORT=18611). Copy
#        binaries aside.
set -euo pipefail
RUNS=${RUNS:-10}
FRESH=${FRESH:-0}
SECONDS_EACH=${SECONDS_EACH:-3}
FIRST_PORT=${PORT:-18611}
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=post-server.sh
source "$SCRIPTS/post-server.sh"

PIDS=()
DIRS=()
PORTS=()
NAMES=()
# Each server's words (`floor`, or a binary and its flags), quoted for `eval`, to start it again (FRESH=1).
WORDS=()
# The runs' lines, for the summary (outside the servers' directories, which a start afresh replaces).
RESULTS=$(mktemp)
stop_all() {
    for index in "${!PIDS[@]}"; do
        PID=${PIDS[$index]} DIR=${DIRS[$index]}
        stop_post_server
    done
    rm -f "$RESULTS"
}
trap stop_all EXIT

start() { # floor|binary [flags...]
    PORT=$((FIRST_PORT + ${#PIDS[@]}))
    start_post_server "post-moments" "$@"
    PIDS+=("$PID") DIRS+=("$DIR") PORTS+=("$PORT") NAMES+=("$(server_name "$@")") WORDS+=("$(printf '%q ' "$@")")
}

restart() { # index: that server stopped and started afresh on its port
    PID=${PIDS[$1]} DIR=${DIRS[$1]}
    stop_post_server
    PORT=${PORTS[$1]}
    eval "start_post_server post-moments ${WORDS[$1]}"
    PIDS[$1]=$PID DIRS[$1]=$DIR
}

rate() { # index: one run against that server, its posts a second (in a command substitution: it starts nothing)
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

# One run against server INDEX into the variable NAME; with FRESH=1 the server is started afresh first (here, in this
# shell, so that the servers it starts are the ones stopped at exit).
measure() { # index name
    [ "$FRESH" = 0 ] || restart "$1" >&2
    printf -v "$2" '%s' "$(rate "$1")"
}

for_each_server start "$@"
case ${#PIDS[@]} in
1)
    echo "${NAMES[0]}: $RUNS runs of ${SECONDS_EACH}s$([ "$FRESH" = 0 ] && echo " back to back" || echo ", each afresh")"
    for run in $(seq "$RUNS"); do
        measure 0 posts
        echo "$run $posts posts/s  directory $(du -sk "${DIRS[0]}" | cut -f1) KiB" | tee -a "$RESULTS"
    done
    summary "$RESULTS" 2 "posts/s"
    ;;
2)
    echo "${NAMES[0]} and ${NAMES[1]}: $RUNS pairs of ${SECONDS_EACH}s runs, alternating$([ "$FRESH" = 0 ] || echo ", each afresh")"
    for run in $(seq "$RUNS"); do
        if [ $((run % 2)) = 1 ]; then
            measure 0 first
            measure 1 second
        else
            measure 1 second
            measure 0 first
        fi
        awk -v r="$run" -v a="$first" -v b="$second" -v n="${NAMES[1]}" -v m="${NAMES[0]}" \
            'BEGIN { printf "%d %s %d  %s %d  ratio %.3f\n", r, m, a, n, b, b / a }' | tee -a "$RESULTS"
    done
    summary "$RESULTS" 0 "ratio"
    ;;
*)
    echo "one server or two" >&2
    exit 2
    ;;
esac
