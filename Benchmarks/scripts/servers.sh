# Sourced by events-bench.sh and fanout-bench.sh: builds and starts the release feedback-host and the
# Hummingbird peer, each pinned to SERVER_CPU, and stops them on exit.
# After `start_servers`: FH_PORT, FH_PID, HB_PORT, HB_PID are set.
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
HB_PORT=${HB_PORT:-18091}
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT_DIR=$(cd "$BENCH_DIR/.." && pwd)
SERVER_LOGS=$(mktemp -d)
SERVER_PIDS=()

# SIGTERM, then SIGKILL after 3 s: Hummingbird's graceful shutdown waits for open SSE responses, which never end.
stop_servers() {
    for pid in "${SERVER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${SERVER_PIDS[@]}"; do
        for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    SERVER_PIDS=()
}
trap stop_servers EXIT

build_servers() { # extra products of the Benchmarks package to build
    (cd "$ROOT_DIR" && swift build -c release --product feedback-host)
    (cd "$BENCH_DIR" && swift build -c release --product HummingbirdPeer)
    for product in "$@"; do (cd "$BENCH_DIR" && swift build -c release --product "$product"); done
    BENCH_BIN=$(cd "$BENCH_DIR" && swift build -c release --show-bin-path)
}

start_servers() { # extra feedback-host flags
    # In memory (--data-dir none), like the peer: the journal has its own benchmark (make -C Benchmarks journal).
    taskset -c "$SERVER_CPU" "$ROOT_DIR/.build/release/feedback-host" --host 127.0.0.1 --port 0 --data-dir none \
        --log-level warning "$@" >"$SERVER_LOGS/feedback-host.out" 2>"$SERVER_LOGS/feedback-host.err" &
    FH_PID=$!
    SERVER_PIDS+=("$FH_PID")
    for _ in $(seq 100); do
        FH_PORT=$(head -1 "$SERVER_LOGS/feedback-host.out" | sed -n 's|^listening on http://[^ ]*:\([0-9]*\)$|\1|p')
        [ -n "$FH_PORT" ] && break
        sleep 0.1
    done
    [ -n "$FH_PORT" ] || { echo "feedback-host did not start; logs in $SERVER_LOGS" >&2; exit 1; }

    if curl -s -o /dev/null "http://127.0.0.1:$HB_PORT/"; then
        echo "port $HB_PORT is already in use (set HB_PORT)" >&2
        exit 1
    fi
    taskset -c "$SERVER_CPU" "$BENCH_BIN/HummingbirdPeer" "$HB_PORT" >"$SERVER_LOGS/peer.log" 2>&1 &
    HB_PID=$!
    SERVER_PIDS+=("$HB_PID")
    for _ in $(seq 100); do
        curl -sf "http://127.0.0.1:$HB_PORT/healthz" >/dev/null && break
        sleep 0.1
    done
    curl -sf "http://127.0.0.1:$HB_PORT/healthz" >/dev/null || { echo "the peer did not start" >&2; exit 1; }
    echo "feedback-host pid $FH_PID port $FH_PORT; Hummingbird peer pid $HB_PID port $HB_PORT (CPU $SERVER_CPU)"
}

check_servers() {
    for pid in "${SERVER_PIDS[@]}"; do
        kill -0 "$pid" 2>/dev/null || { echo "a server died during the run; logs in $SERVER_LOGS" >&2; exit 1; }
    done
}

# The median of the numbers on standard input.
median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
