#!/usr/bin/env bash
# Start-up time of the release feedback-host on a journal of SESSIONS counter sessions (2 events each to replay
# after a snapshot), written by `JournalBenchmark populate`: from exec to the "listening on" line, which is printed
# after every session was restored. Also prints the server's own "sessions restored" log line.
# Usage: scripts/journal-restore.sh   (SESSIONS=100000 ROUNDS=3)
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${SESSIONS:-100000}
ROUNDS=${ROUNDS:-3}

swift build -c release --product JournalBenchmark
scripts/release-binary.sh
BIN=$(swift build -c release --show-bin-path)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$BIN/JournalBenchmark" populate "$WORK/data" "$SESSIONS"
for round in $(seq "$ROUNDS"); do
    python3 - "$WORK" <<'PY'
import subprocess, sys, time
work = sys.argv[1]
start = time.monotonic()
server = subprocess.Popen(["../.build/release/feedback-host", "--port", "0", "--data-dir", work + "/data"],
                          stdout=subprocess.PIPE, stderr=open(work + "/log", "w"), text=True)
line = server.stdout.readline()
elapsed = time.monotonic() - start
server.kill(); server.wait()  # SIGKILL: only the start-up is measured (and the next round recovers a crash)
restored = [l.strip() for l in open(work + "/log") if "sessions restored" in l]
print("start-up to listening: %.2f s (%s) | %s" % (elapsed, line.strip(), restored[-1] if restored else "?"))
PY
done
