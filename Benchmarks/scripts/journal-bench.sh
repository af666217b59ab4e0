#!/usr/bin/env bash
# Posted events/s of the release feedback-host with the journal off, per-commit and interval:10, interleaved.
# Each round starts a fresh server (pinned to SERVER_CPU) with a fresh data directory, creates SESSIONS counter
# sessions, and runs `wrk -t1 -cCONNECTIONS -dDURATION` (pinned to LOAD_CPU) posting increments round-robin.
# Usage: scripts/journal-bench.sh   (ROUNDS=3 DURATION=10s CONNECTIONS=64 SESSIONS=64 SERVER_CPU=0 LOAD_CPU=1)
# Two builds side by side: BINARIES="before=/path/feedback-host after=/path/feedback-host" runs each binary in turn
# with a fresh journal under FSYNC (per-commit) in every round, and gives each one's median against the first.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}
SESSIONS=${SESSIONS:-64}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
PORT=${PORT:-18090}
MODES=${MODES:-"none per-commit interval:10"}

BINARIES=${BINARIES:-}
FSYNC=${FSYNC:-per-commit}
if [ -n "$BINARIES" ]; then
    MODES=""
    for entry in $BINARIES; do MODES="$MODES ${entry%%=*}"; done
else
    (cd .. && swift build -c release --product feedback-host)
fi
BINARY=../.build/release/feedback-host
WORK=$(mktemp -d)
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

RESULTS=$WORK/results
for round in $(seq "$ROUNDS"); do
    for mode in $MODES; do
        data=none
        fsync=per-commit
        binary=$BINARY
        if [ -n "$BINARIES" ]; then
            for entry in $BINARIES; do [ "${entry%%=*}" = "$mode" ] && binary=${entry#*=}; done
            data=$WORK/data-$round-$mode
            fsync=$FSYNC
        elif [ "$mode" != none ]; then
            data=$WORK/data-$round-${mode//:/-}
            fsync=$mode
        fi
        taskset -c "$SERVER_CPU" "$binary" --port "$PORT" --log-level warning --data-dir "$data" --fsync "$fsync" \
            >"$WORK/server.log" 2>&1 &
        PID=$!
        for _ in $(seq 100); do
            curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break
            sleep 0.1
        done
        ids=()
        for _ in $(seq "$SESSIONS"); do
            ids+=("$(curl -s -X POST -H 'Content-Type: application/json' -d '{"system":"counter"}' \
                "http://127.0.0.1:$PORT/v1/sessions" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')")
        done
        out=$(taskset -c "$LOAD_CPU" wrk -t1 "-c$CONNECTIONS" "-d$DURATION" --latency \
            -s scripts/post-session-event.lua "http://127.0.0.1:$PORT" -- "${ids[@]}")
        rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
        p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
        errors=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out" | tr '\n' ' ')
        printf 'round %d %-12s %10.0f events/s  p99 %s %s\n' "$round" "$mode" "$rps" "$p99" "$errors"
        echo "$mode $rps" >>"$RESULTS"
        kill "$PID"
        wait "$PID" 2>/dev/null || true
        PID=""
    done
done
echo "medians:"
for mode in $MODES; do
    median=$(awk -v m="$mode" '$1 == m {print $2}' "$RESULTS" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    echo "$mode $median"
done | tee "$WORK/medians"
first=$(awk 'NR == 1 {print $1}' "$WORK/medians")
base=$(awk 'NR == 1 {print $2}' "$WORK/medians")
awk -v b="$base" -v f="$first" 'NR > 1 {printf "%s / %s = %.2f\n", $1, f, $2 / b}' "$WORK/medians"
