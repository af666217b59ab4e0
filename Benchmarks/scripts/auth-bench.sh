#!/usr/bin/env bash
# Posted events/s with token checks (issue 21): the release feedback-host with `--auth jwt --auth-create open`
# (server-minted HS256 tokens; every POST carries its session's post token, checked from the verified-token cache)
# against the same binary with `--auth off`, in turn in every round, each on a fresh data directory with the shipped
# defaults otherwise (journal per-commit, access log on). 64 counter sessions, `wrk -t1 -c64`, server on SERVER_CPU,
# wrk on LOAD_CPU.
# Usage: scripts/auth-bench.sh   (ROUNDS=3 DURATION=8s SERVER_CPU=0 LOAD_CPU=1)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8s}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
PORT=${PORT:-18093}
(cd .. && swift build -c release --product feedback-host >/dev/null)
BINARY=../.build/release/feedback-host
WORK=$(mktemp -d)
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
head -c 48 /dev/urandom | base64 >"$WORK/key"

for round in $(seq "$ROUNDS"); do
    for mode in off jwt; do
        flags=(--auth off)
        [ "$mode" = jwt ] && flags=(--auth jwt --auth-create open --auth-key-file "$WORK/key")
        taskset -c "$SERVER_CPU" "$BINARY" --port "$PORT" --data-dir "$WORK/data-$round-$mode" "${flags[@]}" \
            >"$WORK/server.log" 2>&1 &
        PID=$!
        for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
        sessions=()
        for _ in $(seq 64); do
            sessions+=("$(curl -s -X POST -H 'Content-Type: application/json' -d '{"system":"counter"}' \
                "http://127.0.0.1:$PORT/v1/sessions" | python3 -c '
import json, sys
body = json.load(sys.stdin)
print(body["id"] + "=" + body.get("tokens", {}).get("post", "none"))')")
        done
        out=$(taskset -c "$LOAD_CPU" wrk -t1 -c64 "-d$DURATION" --latency -s scripts/post-session-event-token.lua \
            "http://127.0.0.1:$PORT" -- "${sessions[@]}")
        rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
        errors=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out" | tr '\n' ' ')
        printf 'round %d auth %-4s %10.0f events/s  p99 %s %s (load %s)\n' "$round" "$mode" "$rps" \
            "$(awk '$1 == "99%" {print $2}' <<<"$out")" "$errors" "$(cut -d' ' -f1-3 /proc/loadavg)"
        echo "$mode $rps" >>"$WORK/results"
        kill "$PID"
        wait "$PID" 2>/dev/null || true
        PID=""
    done
done
for mode in off jwt; do
    echo "$mode $(awk -v m="$mode" '$1 == m {print $2}' "$WORK/results" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done | tee "$WORK/medians"
awk 'NR == 1 {b = $2} NR == 2 {printf "jwt / off = %.2f\n", $2 / b}' "$WORK/medians"
