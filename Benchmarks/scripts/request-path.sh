#!/usr/bin/env bash
# Which of our source files a posted event's request runs through, socket to answer (issue 15's "at most 20 source
# files"). A debug build with LLVM's source-based coverage serves the same counter session twice: once with WARM
# posts on one keep-alive connection, once with WARM + EXTRA; each run ends with SIGTERM (a graceful stop writes the
# profile). A file belongs to the request's path when some region of it ran at least EXTRA times more in the second
# run: the extra posts ran it, not a timer (timers tick a few times a second, and both runs last about as long).
# Files are listed with the largest such difference per post. (callgrind cannot run the server: valgrind 3.19
# crashes inside libdispatch's signal thread, which swift-service-lifecycle's signal handling starts.)
# Usage: Benchmarks/scripts/request-path.sh [--data-dir none]   (default: the shipped journal in a temporary dir)
#        WARM=50 EXTRA=200
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SCRATCH="$ROOT/.build-coverage"
WARM=${WARM:-50}
EXTRA=${EXTRA:-200}
cd "$ROOT"
swift build --scratch-path "$SCRATCH" --product feedback-host \
    -Xswiftc -profile-generate -Xswiftc -profile-coverage-mapping >/dev/null
BIN="$SCRATCH/debug/feedback-host"
WORK=$(mktemp -d)
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"' EXIT

run() { # name posts
    local data=("--data-dir" "$WORK/data-$1")
    [ "${DATA_DIR:-}" = none ] && data=("--data-dir" "none")
    LLVM_PROFILE_FILE="$WORK/$1.profraw" "$BIN" --host 127.0.0.1 --port 0 "${data[@]}" \
        >"$WORK/$1.out" 2>"$WORK/$1.err" &
    PID=$!
    local port=
    for _ in $(seq 300); do
        port=$(sed -n 's|^listening on http://[^ ]*:\([0-9]*\)$|\1|p' "$WORK/$1.out" | head -1)
        [ -n "$port" ] && break
        sleep 0.1
    done
    [ -n "$port" ] || { echo "the server did not start:" >&2; cat "$WORK/$1.err" >&2; exit 1; }
    python3 - "$port" "$2" <<'PY'
import http.client, json, sys
port, posts = int(sys.argv[1]), int(sys.argv[2])
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
connection.request("POST", "/v1/sessions", body=b'{"system":"counter"}', headers={"Content-Type": "application/json"})
response = connection.getresponse()
session = json.loads(response.read())["id"]
assert response.status == 201, response.status
for _ in range(posts):
    connection.request("POST", f"/v1/sessions/{session}/events", body=b'{"type":"increment"}',
                       headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    assert response.status == 200, response.status
PY
    kill -TERM "$PID"
    wait "$PID" || true
    PID=
    /opt/swift/usr/bin/llvm-profdata merge -o "$WORK/$1.profdata" "$WORK/$1.profraw"
    /opt/swift/usr/bin/llvm-cov export -format=text -instr-profile="$WORK/$1.profdata" "$BIN" >"$WORK/$1.json"
}
[ "${1:-}" = "--data-dir" ] && DATA_DIR=$2
run warm "$WARM"
run more $((WARM + EXTRA))
python3 - "$WORK/warm.json" "$WORK/more.json" "$ROOT/Sources/" "$EXTRA" <<'PY'
import json, sys
warm_path, more_path, sources, extra = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def regions(path):
    counts = {}
    for file in json.load(open(path))["data"][0]["files"]:
        if not file["filename"].startswith(sources):
            continue
        name = file["filename"][len(sources):]
        for segment in file["segments"]:
            line, column, count, has_count = segment[0], segment[1], segment[2], segment[3]
            if has_count:
                key = (name, line, column)
                counts[key] = max(counts.get(key, 0), count)
    return counts
warm, more = regions(warm_path), regions(more_path)
per_post = {}
for key, count in more.items():
    difference = count - warm.get(key, 0)
    if difference >= extra:
        per_post[key[0]] = max(per_post.get(key[0], 0), difference / extra)
for name, times in sorted(per_post.items(), key=lambda item: (-item[1], item[0])):
    print(f"{times:8.1f} per post  {name}")
print(f"{len(per_post)} source files of ours ran for each posted event")
PY
