#!/usr/bin/env bash
# Issue 32: what the history index (SQLite's `timeline`, filled by a background step every 250 ms) costs the posts, in
# one run of one release binary: posted events/s and p99 with the index as shipped (`index`) against the same binary
# with the background step off (`no-index`: --journal-timeline-rows 0), and optionally further `--journal-timeline-rows`
# values (`rows:N`). Every round starts each variant afresh in an empty directory (shipped defaults otherwise: journal
# per-commit, access log on), creates SESSIONS counter sessions, then posts {"type":"increment"} round-robin with
# `wrk -t1 -cCONNECTIONS -dDURATION` pinned to LOAD_CPU, the server pinned to SERVER_CPU; the order of the variants
# alternates between rounds. The server's CPU time per post (utime + stime from /proc/PID/stat over the wrk run) is
# printed beside each run: it varies far less than requests/s on a shared machine.
# Usage: scripts/history-index-bench.sh   (ROUNDS=6 DURATION=8s CONNECTIONS=64 SESSIONS=64 VARIANTS="index no-index"
#                                          FH_BINARY=../.build/release/feedback-host SERVER_CPU=0 LOAD_CPU=1)
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-6}
DURATION=${DURATION:-8s}
CONNECTIONS=${CONNECTIONS:-64}
SESSIONS=${SESSIONS:-64}
VARIANTS=${VARIANTS:-index no-index}
FH_PORT=${FH_PORT:-18094}
FH_BINARY=${FH_BINARY:-$BENCH_DIR/../.build/release/feedback-host}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
WORK=$(mktemp -d)
RESULTS=$WORK/results
PID=

cleanup() {
    if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

flags() {
    case "$1" in
    index) ;;
    no-index) echo "--journal-timeline-rows 0" ;;
    rows:*) echo "--journal-timeline-rows ${1#rows:}" ;;
    *) echo "unknown variant $1" >&2; exit 1 ;;
    esac
}

wait_for() {
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$1/healthz" >/dev/null && return 0; sleep 0.1; done
    echo "nothing answers on port $1" >&2
    exit 1
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

echo "$(uptime)"
for round in $(seq "$ROUNDS"); do
    # shellcheck disable=SC2206
    order=($VARIANTS)
    if [ $((round % 2)) -eq 0 ]; then
        reversed=()
        for ((i = ${#order[@]} - 1; i >= 0; i--)); do reversed+=("${order[$i]}"); done
        order=("${reversed[@]}")
    fi
    for variant in "${order[@]}"; do
        dir=$WORK/$round-${variant//:/-}
        mkdir -p "$dir"
        # shellcheck disable=SC2046
        (cd "$dir" && exec taskset -c "$SERVER_CPU" "$FH_BINARY" --port "$FH_PORT" $(flags "$variant") \
            >"$dir/stdout" 2>"$dir/stderr") &
        PID=$!
        wait_for "$FH_PORT"
        : >"$dir/ids"
        for _ in $(seq "$SESSIONS"); do
            # echo: the answer has no final newline, so sed's output would not either.
            echo "$(curl -sf -X POST -H 'Content-Type: application/json' -d '{"system":"counter"}' \
                "http://127.0.0.1:$FH_PORT/v1/sessions" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')" >>"$dir/ids"
        done
        [ "$(grep -c . "$dir/ids")" -eq "$SESSIONS" ] || { echo "creating sessions failed" >&2; exit 1; }
        before=$(cpu_ticks "$PID")
        # shellcheck disable=SC2046
        out=$(taskset -c "$LOAD_CPU" wrk -t1 "-c$CONNECTIONS" "-d$DURATION" --latency \
            -s "$BENCH_DIR/scripts/post-session-event.lua" "http://127.0.0.1:$FH_PORT" -- $(cat "$dir/ids"))
        after=$(cpu_ticks "$PID")
        rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
        total=$(awk '/requests in/ {print $1}' <<<"$out")
        p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
        bad=$(awk '/Non-2xx/ {print $5}' <<<"$out")
        us=$(awk -v t=$((after - before)) -v n="$total" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", t / hz * 1e6 / n}')
        printf 'round %d %-12s %9.0f posts/s  p99 %-9s CPU %6s us/post %s(load %s)\n' "$round" "$variant" "$rps" "$p99" \
            "$us" "${bad:+NON-2XX $bad }" "$(cut -d' ' -f1-3 /proc/loadavg)"
        echo "$variant $rps $us ${bad:-0}" >>"$RESULTS"
        kill "$PID"
        wait "$PID" || true
        PID=
        rm -rf "$dir"
    done
done
echo "$(uptime)"

median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
col() { awk -v v="$1" -v k="$2" '$1 == v {print $k}' "$RESULTS" | median; }
echo
echo "medians of $ROUNDS rounds (wrk -t1 -c$CONNECTIONS -d$DURATION; server on CPU $SERVER_CPU, wrk on CPU $LOAD_CPU)"
for variant in $VARIANTS; do
    printf '%-12s %9.0f posts/s  CPU %6.2f us/post\n' "$variant" "$(col "$variant" 2)" "$(col "$variant" 3)"
done
for variant in $VARIANTS; do
    [ "$variant" = no-index ] && continue
    awk -v v="$variant" -v a="$(col "$variant" 2)" -v b="$(col no-index 2)" -v ca="$(col "$variant" 3)" \
        -v cb="$(col no-index 3)" 'BEGIN {
        if (b > 0) printf "%s / no-index: posted events/s %.3f (target >= 0.95), CPU per post %.3f\n", v, a / b, ca / cb
    }'
done
failures=$(awk '{s += $4} END {print s + 0}' "$RESULTS")
echo "non-2xx answers over all runs: $failures"
[ "$failures" -eq 0 ]
