#!/usr/bin/env bash
# Events/s (issue 5): FeedbackHost's release feedback-host against the Hummingbird peer serving the same sessions
# API on the same Loop and CounterSystem reducer. wrk with CONNECTIONS threads and as many keep-alive connections
# posts {"type":"increment"} (a) to one session per connection, (b) all to one session; every answer must be 200.
# Servers on SERVER_CPU, wrk on LOAD_CPU; rounds interleave the servers and alternate which goes first.
# Usage: scripts/events-bench.sh     (ROUNDS=3 DURATION=10s CONNECTIONS=64 SERVER_CPU=0 LOAD_CPU=1 HB_PORT=18091)
set -euo pipefail
source "$(dirname "$0")/servers.sh"
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}

build_servers
start_servers --max-connections 1000
WORK=$(mktemp -d)
RUN_DIRS+=("$WORK")

create_sessions() { # port count file
    : >"$3"
    local id
    for _ in $(seq "$2"); do
        id=$(curl -sf -X POST -H 'Content-Type: application/json' -d '{"system":"counter"}' \
            "http://127.0.0.1:$1/v1/sessions" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
        echo "$id" >>"$3"
    done
    [ "$(grep -c . "$3")" -eq "$2" ] || { echo "creating sessions on port $1 failed" >&2; exit 1; }
}
create_sessions "$FH_PORT" "$CONNECTIONS" "$WORK/FeedbackHost-many"
create_sessions "$FH_PORT" 1 "$WORK/FeedbackHost-one"
create_sessions "$HB_PORT" "$CONNECTIONS" "$WORK/$PEER-many"
create_sessions "$HB_PORT" 1 "$WORK/$PEER-one"

to_ms() { awk '{v=$1; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; print v}'; }

RESULTS=$WORK/results
# The server's CPU time so far (user + system), in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
measure() { # server sessions port pid
    local out rps p50 p99 failures socket_errors ticks requests cpu_us
    ticks=$(cpu_ticks "$4")
    out=$(SESSIONS_FILE="$WORK/$1-$2" taskset -c "$LOAD_CPU" wrk "-t$CONNECTIONS" "-c$CONNECTIONS" "-d$DURATION" \
        --latency -s "$BENCH_DIR/scripts/session-events.lua" "http://127.0.0.1:$3")
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1 == "50%" {print $2}' <<<"$out" | to_ms)
    p99=$(awk '$1 == "99%" {print $2}' <<<"$out" | to_ms)
    failures=$(awk '/^non-200:/ {print $2}' <<<"$out")
    socket_errors=$(awk '/Socket errors/ {sub(/.*Socket errors: /, ""); print}' <<<"$out")
    # Server CPU per request: what a loaded machine changes least (the wall-clock rate depends on who else runs).
    requests=$(awk '/requests in/ {print $1}' <<<"$out")
    cpu_us=$(awk -v t="$(($(cpu_ticks "$4") - ticks))" -v hz="$(getconf CLK_TCK)" -v n="$requests" \
        'BEGIN {printf "%.2f", t * 1000000 / hz / n}')
    printf '%-12s %-5s %9.0f req/s  p50 %7.2f ms  p99 %7.2f ms  %6.2f us CPU/req  non-200 %s %s  (load %s)\n' "$1" "$2" \
        "$rps" "$p50" "$p99" "$cpu_us" "$failures" "${socket_errors:+socket errors $socket_errors}" \
        "$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "$1 $2 $rps $p50 $p99 $failures $cpu_us" >>"$RESULTS"
}

uptime
for round in $(seq "$ROUNDS"); do
    echo "round $round"
    for sessions in many one; do
        if [ $((round % 2)) -eq 1 ]; then
            measure FeedbackHost "$sessions" "$FH_PORT" "$FH_PID"
            measure "$PEER" "$sessions" "$HB_PORT" "$HB_PID"
        else
            measure "$PEER" "$sessions" "$HB_PORT" "$HB_PID"
            measure FeedbackHost "$sessions" "$FH_PORT" "$FH_PID"
        fi
    done
done
uptime
check_servers

echo
echo "medians of $ROUNDS rounds (wrk -t$CONNECTIONS -c$CONNECTIONS -d$DURATION; servers on CPU $SERVER_CPU, wrk on CPU $LOAD_CPU)"
for sessions in many one; do
    col() { awk -v s="$sessions" -v n="$1" -v c="$2" '$1 == n && $2 == s {print $c}' "$RESULTS" | median; }
    awk -v s="$sessions" -v a="$(col FeedbackHost 3)" -v b="$(col "$PEER" 3)" -v peer="$PEER" \
        -v a50="$(col FeedbackHost 4)" -v b50="$(col "$PEER" 4)" \
        -v a99="$(col FeedbackHost 5)" -v b99="$(col "$PEER" 5)" -v n="$CONNECTIONS" \
        -v acpu="$(col FeedbackHost 7)" -v bcpu="$(col "$PEER" 7)" 'BEGIN {
        label = s == "many" ? n " sessions" : "1 session"
        printf "%-11s FeedbackHost %8.0f req/s p50 %6.2f ms p99 %6.2f ms %6.2f us CPU/req | %s %8.0f req/s p50 %6.2f ms p99 %6.2f ms %6.2f us CPU/req | ratio %.2f, by CPU per request %.2f\n",
            label, a, a50, a99, acpu, peer, b, b50, b99, bcpu, a / b, bcpu / acpu
    }'
done
failures=$(awk '{s += $6} END {print s + 0}' "$RESULTS")
echo "non-200 answers over all runs: $failures"
[ "$failures" -eq 0 ]
