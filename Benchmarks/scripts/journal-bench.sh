#!/usr/bin/env bash
# Posted events/s of the release feedback-host with the journal off, per-commit and interval:10, interleaved.
# Each round starts a fresh server (pinned to SERVER_CPU) with a fresh data directory, creates SESSIONS counter
# sessions, and runs `wrk -t1 -cCONNECTIONS -dDURATION` (pinned to LOAD_CPU) posting increments round-robin.
# Usage: scripts/journal-bench.sh   (ROUNDS=3 DURATION=10s CONNECTIONS=64 SESSIONS=64 SERVER_CPU=0 LOAD_CPU=1)
# Two builds side by side: BINARIES="before=/path/feedback-host after=/path/feedback-host" runs each binary in turn
# with a fresh journal under FSYNC (per-commit) in every round, and gives each one's median against the first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/post-rounds.sh

SERVER_LOG_ARGS=${SERVER_LOG_ARGS---log-level warning}
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
    scripts/release-binary.sh
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
        measure_posts "$mode" "$round" "$binary" --data-dir "$data" --fsync "$fsync"
    done
done
print_medians
