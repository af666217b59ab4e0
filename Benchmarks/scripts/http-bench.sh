#!/usr/bin/env bash
# HTTPServer benchmark: FeedbackHost's server (HTTPServerBench) against Hummingbird 2 (HummingbirdPeer),
# same two endpoints, driven by wrk on loopback. Each server is pinned to SERVER_CPU, wrk to LOAD_CPU;
# rounds interleave the servers. Prints req/s and p99 per run, then medians and the ratios FeedbackHost/Hummingbird.
# Usage: scripts/http-bench.sh            (ROUNDS=3 DURATION=10s CONNECTIONS=64 SERVER_CPU=0 LOAD_CPU=1)
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
FH_PORT=${FH_PORT:-18080}
HB_PORT=${HB_PORT:-18081}

swift build -c release --product HTTPServerBench
swift build -c release --product HummingbirdPeer
BIN=$(swift build -c release --show-bin-path)

LOGS=$(mktemp -d)
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

start() { # name binary port
    if curl -s -o /dev/null "http://127.0.0.1:$3/"; then
        echo "port $3 is already in use" >&2
        exit 1
    fi
    taskset -c "$SERVER_CPU" "$BIN/$2" "$3" >"$LOGS/$1.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do
        curl -sf "http://127.0.0.1:$3/healthz" >/dev/null && return 0
        sleep 0.1
    done
    echo "$1 did not start on port $3" >&2
    exit 1
}
start FeedbackHost HTTPServerBench "$FH_PORT"
start Hummingbird HummingbirdPeer "$HB_PORT"

RESULTS=$(mktemp)
measure() { # server endpoint port
    local args=(-t1 "-c$CONNECTIONS" "-d$DURATION" --latency)
    local url="http://127.0.0.1:$3/healthz"
    if [ "$2" = post ]; then
        args+=(-s scripts/post-event.lua)
        url="http://127.0.0.1:$3/v1/events"
    fi
    local out
    out=$(taskset -c "$LOAD_CPU" wrk "${args[@]}" "$url")
    local rps p99 errors
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p99=$(awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; print v}' <<<"$out")
    errors=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out" | tr '\n' ' ')
    printf '%-12s %-8s %10.0f req/s  p99 %7.2f ms %s\n' "$1" "$2" "$rps" "$p99" "$errors"
    echo "$1 $2 $rps $p99" >>"$RESULTS"
}

for round in $(seq "$ROUNDS"); do
    echo "round $round"
    for endpoint in healthz post; do
        if [ $((round % 2)) -eq 1 ]; then
            measure FeedbackHost "$endpoint" "$FH_PORT"
            measure Hummingbird "$endpoint" "$HB_PORT"
        else
            measure Hummingbird "$endpoint" "$HB_PORT"
            measure FeedbackHost "$endpoint" "$FH_PORT"
        fi
    done
done

median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
echo
echo "medians of $ROUNDS rounds (wrk -t1 -c$CONNECTIONS -d$DURATION, server on CPU $SERVER_CPU, wrk on CPU $LOAD_CPU)"
for endpoint in healthz post; do
    fh_rps=$(awk -v e="$endpoint" '$1 == "FeedbackHost" && $2 == e {print $3}' "$RESULTS" | median)
    hb_rps=$(awk -v e="$endpoint" '$1 == "Hummingbird" && $2 == e {print $3}' "$RESULTS" | median)
    fh_p99=$(awk -v e="$endpoint" '$1 == "FeedbackHost" && $2 == e {print $4}' "$RESULTS" | median)
    hb_p99=$(awk -v e="$endpoint" '$1 == "Hummingbird" && $2 == e {print $4}' "$RESULTS" | median)
    awk -v e="$endpoint" -v a="$fh_rps" -v b="$hb_rps" -v pa="$fh_p99" -v pb="$hb_p99" 'BEGIN {
        printf "%-8s FeedbackHost %9.0f req/s p99 %6.2f ms | Hummingbird %9.0f req/s p99 %6.2f ms | ratio %.2f\n", e, a, pa, b, pb, a / b
    }'
done
rm -f "$RESULTS"
for pid in "${PIDS[@]}"; do
    kill -0 "$pid" 2>/dev/null || { echo "a server died during the run; logs in $LOGS" >&2; exit 1; }
done
