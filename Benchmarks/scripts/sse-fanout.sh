#!/usr/bin/env bash
# Stream fan-out of the release feedback-host: N subscribers of one counter session, EVENTS posts INTERVAL_MS apart;
# post-to-receive p50/p99/max, events lost, RSS per idle stream and the server's CPU ticks (utime, stime).
# Usage: scripts/sse-fanout.sh N EVENTS INTERVAL_MS      (e.g. 1000 30 200, or 10000 10 1000)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
EVENTS=${2:-30}
INTERVAL=${3:-200}
scripts/release-binary.sh
BIN=$(cd .. && swift build -c release --show-bin-path)
WORK=$(mktemp -d)
cc -O2 -o "$WORK/probe" scripts/sse-fanout-probe.c
ulimit -n $((N + 1000))
"$BIN/feedback-host" --host 127.0.0.1 --port 0 --data-dir none --max-connections $((N + 100)) --stream-max-per-session $((N + 100)) \
    --stream-max-total $((N + 100)) --log-level error > "$WORK/out" 2> "$WORK/err" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do grep -q listening "$WORK/out" && break; sleep 0.1; done
PORT=$(head -1 "$WORK/out" | sed 's/.*://')
ID=$(curl -s -X POST -H 'Content-Type: application/json' -d '{"system":"counter"}' "http://127.0.0.1:$PORT/v1/sessions" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
"$WORK/probe" "$PORT" "$ID" "$N" "$EVENTS" "$INTERVAL" "$SERVER"
echo "server cpu ticks (utime stime): $(awk '{print $14, $15}' /proc/$SERVER/stat); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
