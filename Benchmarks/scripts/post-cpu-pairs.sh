#!/usr/bin/env bash
# Issue 17: two feedback-host builds in alternating pairs, each run a fresh server in an empty directory with the
# shipped defaults (plus FLAGS), SESSIONS counter sessions, `wrk -t1 -cCONNECTIONS -dDURATION` posting
# {"type":"increment"} round-robin, then GET /healthz. Per run: posted events/s, the server's CPU time per posted event
# (utime + stime from /proc/PID/stat over the wrk run: what a machine shared with other builds disturbs less than
# the rate), its share of its core, its /healthz rate and the journal's records per commit. Medians at the end.
# AFTER_FLAGS are given to the second alone: what a setting costs, with the same binary twice (session 41).
# Usage: scripts/post-cpu-pairs.sh BEFORE_BINARY AFTER_BINARY   (PAIRS=6 DURATION=5s CONNECTIONS=64 SESSIONS=64
#        FLAGS="" AFTER_FLAGS="" PORT=18473 SERVER_CPU=0 LOAD_CPU=1). Copy both binaries aside first.
set -euo pipefail
BEFORE=$1
AFTER=$2
PAIRS=${PAIRS:-6}
DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-64}
SESSIONS=${SESSIONS:-64}
FLAGS=${FLAGS:-}
AFTER_FLAGS=${AFTER_FLAGS:-}
PORT=${PORT:-18473}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
RESULTS=$(mktemp)
PID=

stop() { [ -z "$PID" ] || { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=; }; }
trap stop EXIT

run() { # label binary [flags of its own]
    local dir ids cpu0 cpu1 t0 t1 out events bad healthz batch
    dir=$(mktemp -d)
    # shellcheck disable=SC2086
    (cd "$dir" && exec taskset -c "$SERVER_CPU" "$2" --port "$PORT" $FLAGS ${3:-} >"$dir/stdout" 2>"$dir/stderr") &
    PID=$!
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
    ids=$dir/ids
    for _ in $(seq "$SESSIONS"); do
        echo "$(curl -sf -X POST -H 'Content-Type: application/json' -d '{"system":"counter"}' \
            "http://127.0.0.1:$PORT/v1/sessions" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')" >>"$ids"
    done
    cpu0=$(awk '{print $14 + $15}' "/proc/$PID/stat")
    t0=$(date +%s.%N)
    # shellcheck disable=SC2046
    out=$(taskset -c "$LOAD_CPU" wrk -t1 "-c$CONNECTIONS" "-d$DURATION" -s "$SCRIPTS/post-session-event.lua" \
        "http://127.0.0.1:$PORT" -- $(cat "$ids"))
    cpu1=$(awk '{print $14 + $15}' "/proc/$PID/stat")
    t1=$(date +%s.%N)
    events=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    bad=$(awk '/Non-2xx/ {print $5}' <<<"$out")
    healthz=$(taskset -c "$LOAD_CPU" wrk -t1 "-c$CONNECTIONS" "-d$DURATION" "http://127.0.0.1:$PORT/healthz" |
        awk '/Requests\/sec/ {print $2}')
    batch=$(curl -s "http://127.0.0.1:$PORT/metrics" | awk '/^journal_batch_records_sum/ {s = $2}
        /^journal_batch_records_count/ {c = $2} END {if (c > 0) printf "%.1f", s / c; else print "-"}')
    stop
    rm -rf "$dir"
    # CPU ticks are 1/100 s (USER_HZ).
    awk -v l="$1" -v e="$events" -v c0="$cpu0" -v c1="$cpu1" -v t0="$t0" -v t1="$t1" -v h="$healthz" -v b="$batch" \
        -v bad="${bad:-0}" -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
        cpu = (c1 - c0) / 100; wall = t1 - t0
        printf "%-7s events/s %7.0f  cpu %3.0f%%  %5.1f us/event  healthz %7.0f  records/commit %s  non-2xx %s  load %s\n",
            l, e, 100 * cpu / wall, 1e6 * cpu / (e * wall), h, b, bad, load
    }' | tee -a "$RESULTS"
}

for pair in $(seq "$PAIRS"); do
    if [ $((pair % 2)) -eq 1 ]; then
        run before "$BEFORE"
        run after "$AFTER" "$AFTER_FLAGS"
    else
        run after "$AFTER" "$AFTER_FLAGS"
        run before "$BEFORE"
    fi
done
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for label in before after; do
    printf '%-7s medians: events/s %s, us/event %s\n' "$label" \
        "$(awk -v l=$label '$1 == l {print $3}' "$RESULTS" | median)" \
        "$(awk -v l=$label '$1 == l {print $6}' "$RESULTS" | median)"
done
bad=$(awk '{for (i = 1; i <= NF; i++) if ($i == "non-2xx") s += $(i + 1)} END {print s + 0}' "$RESULTS")
rm -f "$RESULTS"
[ "$bad" -eq 0 ] || { echo "non-2xx answers: $bad" >&2; exit 1; }
