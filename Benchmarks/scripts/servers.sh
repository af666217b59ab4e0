# Sourced by events-bench.sh and fanout-bench.sh: builds and starts the release feedback-host and the
# Hummingbird peer, each pinned to SERVER_CPU, and stops them on exit. feedback-host runs in memory with warning
# logs, unless SHIPPED_DEFAULTS=1 (the journal and info logging with the access log, as shipped).
# After `start_servers`: FH_PORT, FH_PID, HB_PORT, HB_PID are set; PEER names the peer in the results.
# Two builds of feedback-host side by side instead (a change against the commit before it): FH_BINARY=PATH runs
# that binary as FeedbackHost, PEER_BINARY=PATH runs another feedback-host binary as the peer, named PEER
# (default "before"), with the same flags. Copy both binaries aside first, so that no build replaces them mid-run.
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
HB_PORT=${HB_PORT:-18091}
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT_DIR=$(cd "$BENCH_DIR/.." && pwd)
SERVER_LOGS=$(mktemp -d)
FH_BINARY=${FH_BINARY:-}
PEER_BINARY=${PEER_BINARY:-}
if [ -n "$PEER_BINARY" ]; then PEER=${PEER:-before}; else PEER=Hummingbird; fi
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
# Directories the run made (SERVER_LOGS, a script's WORK): removed when it ends well, kept when it fails, for the
# servers' logs, and named on standard error.
RUN_DIRS=("$SERVER_LOGS")
finish_run() {
    local status=$?
    stop_servers
    if [ "$status" -eq 0 ]; then
        rm -rf "${RUN_DIRS[@]}"
    else
        echo "the run failed; its logs are kept in ${RUN_DIRS[*]}" >&2
    fi
}
trap finish_run EXIT

build_servers() { # extra products of the Benchmarks package to build
    [ -n "$FH_BINARY" ] || "$BENCH_DIR/scripts/release-binary.sh"
    [ -n "$PEER_BINARY" ] || (cd "$BENCH_DIR" && swift build -c release --product HummingbirdPeer)
    for product in "$@"; do (cd "$BENCH_DIR" && swift build -c release --product "$product"); done
    BENCH_BIN=$(cd "$BENCH_DIR" && swift build -c release --show-bin-path)
}

# Starts a feedback-host binary on a free port and sets STARTED_PID and STARTED_PORT.
start_feedback_host() { # binary log-name flags...
    local binary=$1 name=$2
    shift 2
    # In memory (--data-dir none), like the peer: the journal has its own benchmark (make -C Benchmarks journal).
    # SHIPPED_DEFAULTS=1: as `make run` ships it instead (the journal in a fresh ./data, info logging with the
    # access log), the server's stderr to a file.
    local settings=(--data-dir none --log-level warning)
    if [ "${SHIPPED_DEFAULTS:-0}" = 1 ]; then settings=(--data-dir "$SERVER_LOGS/$name-data-$RANDOM"); fi
    # The last round's log goes first: the loop below could read its port before the new server's shell truncates it.
    rm -f "$SERVER_LOGS/$name.out"
    taskset -c "$SERVER_CPU" "$binary" --host 127.0.0.1 --port 0 "${settings[@]}" \
        "$@" >"$SERVER_LOGS/$name.out" 2>"$SERVER_LOGS/$name.err" &
    STARTED_PID=$!
    SERVER_PIDS+=("$STARTED_PID")
    STARTED_PORT=
    for _ in $(seq 100); do
        STARTED_PORT=$(head -1 "$SERVER_LOGS/$name.out" 2>/dev/null | sed -n 's|^listening on http://[^ ]*:\([0-9]*\)$|\1|p')
        [ -n "$STARTED_PORT" ] && break
        sleep 0.1
    done
    [ -n "$STARTED_PORT" ] || { echo "$binary did not start; logs in $SERVER_LOGS" >&2; exit 1; }
}

start_servers() { # extra feedback-host flags
    start_feedback_host "${FH_BINARY:-$ROOT_DIR/.build/release/feedback-host}" feedback-host "$@"
    FH_PID=$STARTED_PID
    FH_PORT=$STARTED_PORT
    if [ -n "$PEER_BINARY" ]; then
        start_feedback_host "$PEER_BINARY" peer "$@"
        HB_PID=$STARTED_PID
        HB_PORT=$STARTED_PORT
        echo "feedback-host pid $FH_PID port $FH_PORT; $PEER ($PEER_BINARY) pid $HB_PID port $HB_PORT (CPU $SERVER_CPU)"
        return
    fi

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
