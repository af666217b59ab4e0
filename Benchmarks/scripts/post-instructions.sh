#!/usr/bin/env bash
# Issue 30: the instructions a durable post costs each feedback-host build, counted by callgrind instead of timed:
# what this noisy machine's rates cannot tell apart (a few per cent), an instruction count can (session 25). For each
# binary: a fresh server in an empty directory (shipped defaults) under `valgrind --tool=callgrind` (about a thousand
# posts a second there), SESSIONS counter sessions, WARMUP of `wrk -t1 -cCONNECTIONS` posting {"type":"increment"}
# round-robin, the counters zeroed, DURATION more, one dump. Printed per post, from the functions' inclusive counts:
# the shard's request path (`Shard.process`: parse, route, the handler, decode, reduce, the recorder), the late answer's
# delivery (`Shard.delivery`), the recorder's settling on the writer (`SessionRecorder.settled`: the answer handed back)
# and the whole process. Under callgrind a group commit carries a post or two and the timers' work (compaction ticks,
# probes) falls on fewer posts, so the writer's figures and the total are not the shipped rates': compare builds
# against each other, one run beside the other. valgrind 3.19 needs `sigsuspend-shim.c` preloaded (built here).
# Usage: scripts/post-instructions.sh BINARY [BINARY ...]   (SESSIONS=16 CONNECTIONS=16 WARMUP=5s DURATION=10s
#        PORT=18792 KEEP=); symbols are kept (`strip --strip-debug` of a copy: valgrind cannot read the debug info here).
# KEEP=DIR keeps each dump as DIR/callgrind.NAME.out, for `callgrind-tree.py` (callees, callers, self cost a post).
# FLAGS="--data-dir none" runs every binary with those flags instead of the shipped defaults: without the journal,
# Shard.process and Shard.delivery are the session layer's and the HTTP server's instructions alone (session 36).
set -euo pipefail
SESSIONS=${SESSIONS:-16}
CONNECTIONS=${CONNECTIONS:-16}
WARMUP=${WARMUP:-5s}
DURATION=${DURATION:-10s}
PORT=${PORT:-18792}
KEEP=${KEEP:-}
FLAGS=${FLAGS:-}
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
SHIM=$(mktemp -d)
trap 'rm -rf "$SHIM"' EXIT
cc -O2 -shared -fPIC -o "$SHIM/sigsuspend-shim.so" "$SCRIPTS/sigsuspend-shim.c"

measure() { # binary
    local dir pid posts file
    dir=$(mktemp -d)
    cp "$1" "$dir/bin"
    strip --strip-debug "$dir/bin"
    # FLAGS split into words on purpose.
    # shellcheck disable=SC2086
    (cd "$dir" && LD_PRELOAD="$SHIM/sigsuspend-shim.so" exec valgrind --tool=callgrind \
        --callgrind-out-file="$dir/cg.out" --dump-instr=no ./bin --port "$PORT" $FLAGS >out.log 2>err.log) &
    pid=$!
    for _ in $(seq 300); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.2; done
    : >"$dir/ids"
    for _ in $(seq "$SESSIONS"); do
        curl -sf -X POST -H 'Content-Type: application/json' -d '{"system":"counter"}' \
            "http://127.0.0.1:$PORT/v1/sessions" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p' >>"$dir/ids"
        echo >>"$dir/ids"
    done
    # shellcheck disable=SC2046
    wrk -t1 "-c$CONNECTIONS" "-d$WARMUP" -s "$SCRIPTS/post-session-event.lua" "http://127.0.0.1:$PORT" \
        -- $(cat "$dir/ids") >/dev/null
    callgrind_control -z "$pid" >/dev/null 2>&1
    # shellcheck disable=SC2046
    wrk -t1 "-c$CONNECTIONS" "-d$DURATION" -s "$SCRIPTS/post-session-event.lua" "http://127.0.0.1:$PORT" \
        -- $(cat "$dir/ids") >"$dir/wrk.out"
    callgrind_control -d "$pid" >/dev/null 2>&1
    sleep 1
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    posts=$(awk '/requests in/ {print $1}' "$dir/wrk.out")
    file=$(ls "$dir"/cg.out.* | head -1)
    callgrind_annotate --inclusive=yes "$file" 2>/dev/null | awk -v posts="$posts" -v name="$(basename "$1")" '
        /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 }
        /ShardC7processyyAA10ConnectionCF / { gsub(",", "", $1); process = $1 }
        # The list borrowed (before 2026-12-01) or `inout` (after).
        /ShardC7deliveryySayAA11LateAnswersC6AnswerVGz?F / { gsub(",", "", $1); delivery = $1 }
        /RecorderC7settled/ && !settled { gsub(",", "", $1); settled = $1 }
        END {
            printf "%-20s posts %6d  instructions a post: Shard.process %6.0f  Shard.delivery %5.0f  settled %5.0f  whole process %6.0f\n",
                name, posts, process / posts, delivery / posts, settled / posts, total / posts
        }'
    if [ -n "$KEEP" ]; then
        cp "$file" "$KEEP/callgrind.$(basename "$1").out"
        echo "  kept $KEEP/callgrind.$(basename "$1").out ($posts posts): scripts/callgrind-tree.py it $posts callees REGEX"
    fi
    rm -rf "$dir"
}

for binary in "$@"; do measure "$binary"; done
