#!/usr/bin/env bash
# Which of our source files a posted event's request runs through, socket to answer (issue 15's "at most 20 source
# files"): a debug build with DWARF 4 (valgrind 3.19 reads no DWARF 5) runs under callgrind with collection off;
# collection is switched on for exactly one POST /v1/sessions/{id}/events on a warm keep-alive connection and off
# after its answer; the files under Sources/ that executed any instruction in that window are listed with their
# share of the instructions. Run from the repository root or Benchmarks/.
# Usage: Benchmarks/scripts/request-path.sh [--data-dir none]   (default: the shipped journal in a temporary dir)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SCRATCH="$ROOT/.build-dwarf4"
cd "$ROOT"
swift build --scratch-path "$SCRATCH" --product feedback-host \
    -Xswiftc -dwarf-version=4 -Xcc -gdwarf-4 >/dev/null
BIN="$SCRATCH/debug/feedback-host"
WORK=$(mktemp -d)
PORT=${PORT:-18199}
DATA=("--data-dir" "$WORK/data")
[ "${1:-}" = "--data-dir" ] && DATA=("--data-dir" "$2")
valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$WORK/callgrind.out" \
    "$BIN" --host 127.0.0.1 --port "$PORT" "${DATA[@]}" --log-level warning >"$WORK/server.out" 2>"$WORK/server.err" &
PID=$!
trap 'kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; rm -rf "$WORK"' EXIT
# Under callgrind a debug server takes a while to start (minutes on a loaded machine).
for _ in $(seq 1500); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null || { echo "the server did not start:" >&2; cat "$WORK/server.err" >&2; exit 1; }
ID=$(curl -sf -X POST -H 'Content-Type: application/json' -d '{"system":"counter"}' \
    "http://127.0.0.1:$PORT/v1/sessions" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
# One client process, one keep-alive connection: warm-up posts, then the measured one between two toggles.
python3 - "$PORT" "$ID" "$PID" <<'PY'
import http.client, subprocess, sys
port, session, pid = int(sys.argv[1]), sys.argv[2], sys.argv[3]
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
def post():
    connection.request("POST", f"/v1/sessions/{session}/events", body=b'{"type":"increment"}',
                       headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    assert response.status == 200, response.status
for _ in range(20):
    post()
subprocess.run(["callgrind_control", "-i", "on", pid], check=True, capture_output=True)
post()
subprocess.run(["callgrind_control", "-i", "off", pid], check=True, capture_output=True)
PY
callgrind_control -d "$PID" >/dev/null
sleep 1
python3 - "$WORK" "$ROOT/Sources/" <<'PY'
import collections, glob, re, sys
work, sources = sys.argv[1], sys.argv[2]
cost = collections.Counter()
for path in glob.glob(work + "/callgrind.out*"):
    files = {}
    current = None
    for line in open(path, errors="replace"):
        m = re.match(r"^(fl|fi|fe)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                files[m.group(2)] = m.group(3).strip()
            current = files.get(m.group(2))
            continue
        if re.match(r"^(fn|cfn|cfi|cfl|calls|ob|cob)=", line):
            continue
        m = re.match(r"^[+-]?\d+ (\d+)", line)
        if m and current and current.startswith(sources):
            cost[current[len(sources):]] += int(m.group(1))
total = sum(cost.values()) or 1
for name, instructions in cost.most_common():
    print(f"{instructions * 100 / total:6.2f}%  {name}")
print(f"{len(cost)} source files of ours ran for this request")
PY
