#!/usr/bin/env bash
# Issue 30: where a durable post's CPU goes, by phase of its way (docs/BENCHMARKS.md, session 21). Runs the given
# feedback-host binary (with its flags) alone on SERVER_CPU, SESSIONS counter sessions, `wrk -t1 -cCONNECTIONS`
# posting {"type":"increment"} round-robin on LOAD_CPU, and records the server with `perf record --call-graph dwarf`
# for DURATION seconds after WARMUP. Each sample goes to the first phase (in the order below) one of its frames
# belongs to, per thread (the shard's; Dispatch's, where the journal's writer runs) and per side (user or kernel), printed as microseconds
# a post: samples / frequency / posts. The profiler slows the server (by about a quarter in session 21), so compare
# phases with each other and with another build's run, not with unprofiled figures.
# Usage: scripts/post-phases.sh BINARY [flags]   (SERVER_CPU=0 LOAD_CPU=1 CONNECTIONS=64 SESSIONS=64 DURATION=8
#        WARMUP=3 FREQUENCY=2999 PORT=18561). Needs perf and root (or perf_event_paranoid ≤ 1).
set -euo pipefail
BINARY=$1
shift
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
CONNECTIONS=${CONNECTIONS:-64}
SESSIONS=${SESSIONS:-64}
DURATION=${DURATION:-8}
WARMUP=${WARMUP:-3}
FREQUENCY=${FREQUENCY:-2999}
PORT=${PORT:-18561}
SCRIPTS=$(cd "$(dirname "$0")" && pwd)

WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
    [ -z "$SERVER_PID" ] || kill "$SERVER_PID" 2>/dev/null || true
    [ -z "$SERVER_PID" ] || wait "$SERVER_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

cd "$WORK"
taskset -c "$SERVER_CPU" "$BINARY" --port "$PORT" "$@" >server.out 2>server.err &
SERVER_PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
: >ids
for _ in $(seq "$SESSIONS"); do
    # One id a line, even when the answer ends without a newline.
    echo "$(curl -sf -X POST -H 'Content-Type: application/json' -d '{"system":"counter"}' \
        "http://127.0.0.1:$PORT/v1/sessions" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')" >>ids
done
[ "$(grep -c . ids)" -eq "$SESSIONS" ] || { echo "creating sessions failed" >&2; exit 1; }
# shellcheck disable=SC2046
taskset -c "$LOAD_CPU" wrk -t1 "-c$CONNECTIONS" "-d${WARMUP}s" -s "$SCRIPTS/post-session-event.lua" \
    "http://127.0.0.1:$PORT" -- $(cat ids) >/dev/null
perf record -F "$FREQUENCY" --call-graph dwarf,16384 -p "$SERVER_PID" -o perf.data -- sleep "$DURATION" \
    >/dev/null 2>&1 &
PERF_PID=$!
# shellcheck disable=SC2046
taskset -c "$LOAD_CPU" wrk -t1 "-c$CONNECTIONS" "-d${DURATION}s" -s "$SCRIPTS/post-session-event.lua" \
    "http://127.0.0.1:$PORT" -- $(cat ids) >wrk.out
wait "$PERF_PID" || true
posts=$(awk '/requests in/ {print $1}' wrk.out)
bad=$(awk '/Non-2xx/ {print $5}' wrk.out)
echo "posts: $posts in ${DURATION} s under the profiler${bad:+; NON-2XX $bad}"
perf script -i perf.data -F comm,ip,sym,dso 2>/dev/null | python3 -c '
import collections, sys
frequency, posts, binary = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3][:15]
# (phase, substrings of a frame that mark it); the first phase with a frame in the stack takes the sample.
phases = [
    ("compaction tick", ["compactOnQueue"]),
    ("checkpoint", ["sqlite3Checkpoint"]),
    ("SQLite commit", ["sqlite3PagerCommitPhaseOne", "sqlite3VdbeHalt"]),
    ("answers handed back", ["RecorderC7settled", "LateAnswersC3add"]),
    ("records written (SQLite insert, checksum)", ["StoreC5write", "StoreC6commit"]),
    ("group commit, the rest", ["commitBatch", "commitNext"]),
    ("recorder step", ["RecorderC6record"]),
    ("batch end", ["RecorderC10batchEnded"]),
    ("late answers delivered", ["ShardC7delivery"]),
    ("crash marks", ["CrashMarks"]),
    ("guard", ["GuardC11stepStarted"]),
    ("loop", ["FeedbackLoop0B0C4send"]),
    ("session: route and post", ["SystemA0C5route", "postEvents"]),
    ("HTTP: parse, route, answer", ["ShardC7process"]),
    ("shard loop", ["waitForEvents"]),
]
counts = collections.Counter()
for block in sys.stdin.read().split("\n\n"):
    lines = [line.strip() for line in block.strip().split("\n") if line.strip()]
    if len(lines) < 2:
        continue
    # The shards run on threads of their own (named as the process); the journal writer on a Dispatch queue.
    comm = lines[0].split()[0]
    thread = "shard" if comm == binary else "dispatch" if "overcommit" in comm else "other"
    side = "kernel" if "[kernel.kallsyms]" in lines[1] else "user"
    stack = " ".join(lines[1:])
    phase = next((name for name, marks in phases if any(mark in stack for mark in marks)), "other")
    counts[(thread, side, phase)] += 1
for (thread, side, phase), count in sorted(counts.items(), key=lambda item: -item[1]):
    microseconds = count / frequency / posts * 1e6
    if microseconds >= 0.02:
        print(f"{thread:9} {side:7} {phase:44} {microseconds:6.3f} us a post")
' "$FREQUENCY" "$((posts))" "$(basename "$BINARY")"
