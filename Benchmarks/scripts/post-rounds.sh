# Sourced by journal-bench.sh and postgres-bench.sh: one measured run of posted events/s, and the medians of all.
# Uses WORK, RESULTS, PORT, SESSIONS, CONNECTIONS, DURATION, SERVER_CPU, LOAD_CPU, MODES; sets PID while a server runs.
# The servers run with SERVER_LOG_ARGS: unset, the shipped defaults (info, with the access log); journal-bench.sh
# sets `--log-level warning` (no access log), as its earlier figures were measured.

# measure_posts LABEL ROUND BINARY ARGS...: starts BINARY pinned to SERVER_CPU with ARGS, creates SESSIONS counter
# sessions, posts increments to them round-robin with wrk pinned to LOAD_CPU, prints and records the rate, stops it.
# REQUEST=get measures GETs of the sessions instead of posts.
measure_posts() {
    local label=$1 round=$2 binary=$3
    shift 3
    taskset -c "$SERVER_CPU" "$binary" --port "$PORT" ${SERVER_LOG_ARGS:-} "$@" >"$WORK/server.log" 2>&1 &
    PID=$!
    for _ in $(seq 100); do
        curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break
        sleep 0.1
    done
    local ids=()
    for _ in $(seq "$SESSIONS"); do
        ids+=("$(curl -s -X POST -H 'Content-Type: application/json' -d '{"system":"counter"}' \
            "http://127.0.0.1:$PORT/v1/sessions" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')")
    done
    local out rps p99 errors
    out=$(taskset -c "$LOAD_CPU" wrk -t1 "-c$CONNECTIONS" "-d$DURATION" --latency \
        -s scripts/post-session-event.lua "http://127.0.0.1:$PORT" -- "${ids[@]}")
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
    errors=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out" | tr '\n' ' ')
    printf 'round %d %-12s %10.0f events/s  p99 %s %s\n' "$round" "$label" "$rps" "$p99" "$errors"
    echo "$label $rps" >>"$RESULTS"
    kill "$PID"
    wait "$PID" 2>/dev/null || true
    PID=""
}

# print_medians: each mode's median rate (in MODES order), then each against the first.
print_medians() {
    echo "medians:"
    for mode in $MODES; do
        median=$(awk -v m="$mode" '$1 == m {print $2}' "$RESULTS" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        echo "$mode $median"
    done | tee "$WORK/medians"
    local first base
    first=$(awk 'NR == 1 {print $1}' "$WORK/medians")
    base=$(awk 'NR == 1 {print $2}' "$WORK/medians")
    awk -v b="$base" -v f="$first" 'NR > 1 {printf "%s / %s = %.2f\n", $1, f, $2 / b}' "$WORK/medians"
}
