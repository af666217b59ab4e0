#!/usr/bin/env bash
# Issue 30: the instructions one frame of an SSE fan-out costs each feedback-host build, counted by callgrind instead
# of timed (a fan-out's latency on this machine moves by a third from run to run; its user time a frame is a tenth of
# its CPU, the rest the kernel's sends). For each binary: a fresh server (no journal, warning logging: the frames'
# way is the same with the journal, which only delays each state until its commit) under `valgrind --tool=callgrind`,
# SUBSCRIBERS subscribers of one counter session (`SSEFanout`), EVENTS events posted INTERVAL_MS apart, one dump when
# the server stops. Printed per frame delivered (subscribers x events, plus each subscriber's first snapshot), from
# the functions' inclusive counts: the hub's pass (`StreamHub.bringUpToDate`: each subscriber's decision and its
# place in a part), the shards' sends (`Shard.streamWrite(_:_:to:)`: the write to one connection, the `send` call
# itself counted as a call, not the kernel's work), and the whole process (connections, requests and start-up
# included). Compare builds against each other, one run beside the other. valgrind 3.19 needs `sigsuspend-shim.c`
# preloaded (built here).
# Usage: scripts/fanout-instructions.sh BINARY [BINARY ...]   (SUBSCRIBERS=2000 EVENTS=20 INTERVAL_MS=300
#        PORT=18801 KEEP=); KEEP=DIR keeps each dump as DIR/callgrind.NAME.out, for `callgrind-tree.py`.
set -euo pipefail
SUBSCRIBERS=${SUBSCRIBERS:-2000}
EVENTS=${EVENTS:-20}
INTERVAL_MS=${INTERVAL_MS:-300}
PORT=${PORT:-18801}
KEEP=${KEEP:-}
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
BENCH_BIN=$(cd "$SCRIPTS/.." && swift build -c release --show-bin-path)
[ -x "$BENCH_BIN/SSEFanout" ] || (cd "$SCRIPTS/.." && swift build -c release --product SSEFanout >/dev/null)
ulimit -n "$(ulimit -Hn)"
SHIM=$(mktemp -d)
trap 'rm -rf "$SHIM"' EXIT
cc -O2 -shared -fPIC -o "$SHIM/sigsuspend-shim.so" "$SCRIPTS/sigsuspend-shim.c"

inclusive() { # dump frames demangled-name-prefix: that function's inclusive instructions a frame
    python3 - "$SCRIPTS" "$@" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("tree", sys.argv[1] + "/callgrind-tree.py")
tree = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tree)
own, calls, _ = tree.read(sys.argv[2])
names = sorted(set(own) | set(calls))
total = sum(own[name] + sum(calls[name].values())
            for name, shown in zip(names, tree.demangle(names)) if shown.startswith(sys.argv[4]))
print(round(total / float(sys.argv[3])))
PY
}

measure() { # binary
    local dir pid frames whole name
    dir=$(mktemp -d)
    cp "$1" "$dir/bin"
    strip --strip-debug "$dir/bin"
    (cd "$dir" && LD_PRELOAD="$SHIM/sigsuspend-shim.so" exec valgrind --tool=callgrind \
        --callgrind-out-file="$dir/cg.out" --dump-instr=no ./bin --host 127.0.0.1 --port "$PORT" --data-dir none \
        --log-level warning --max-connections 20000 --stream-max-per-session 20000 \
        --stream-max-total 20000 >out.log 2>err.log) &
    pid=$!
    for _ in $(seq 300); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
    "$BENCH_BIN/SSEFanout" --port "$PORT" --subscribers "$SUBSCRIBERS" --events "$EVENTS" \
        --interval-ms "$INTERVAL_MS" --settle-ms 2000 --label callgrind >"$dir/fanout.out" 2>&1 ||
        { cat "$dir/fanout.out"; kill "$pid"; exit 1; }
    grep -q "lost 0 " "$dir/fanout.out" || { echo "frames were lost: $(grep lost "$dir/fanout.out")" >&2; }
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    frames=$((SUBSCRIBERS * EVENTS + SUBSCRIBERS))
    whole=$(awk '/^summary:|^totals:/ {print $2; exit}' "$dir/cg.out")
    name=$(basename "$1")
    printf '%-20s frames %7d  instructions a frame: hub pass %5s  shards %5s  whole process %6d\n' "$name" "$frames" \
        "$(inclusive "$dir/cg.out" "$frames" 'specialized StreamHub.bringUpToDate')" \
        "$(inclusive "$dir/cg.out" "$frames" 'Shard.streamWrite(_:_:to:)')" \
        "$((whole / frames))"
    if [ -n "$KEEP" ]; then
        cp "$dir/cg.out" "$KEEP/callgrind.$name.out"
        echo "  kept $KEEP/callgrind.$name.out ($frames frames): scripts/callgrind-tree.py it $frames callees REGEX"
    fi
    rm -rf "$dir"
}

for binary in "$@"; do measure "$binary"; done
