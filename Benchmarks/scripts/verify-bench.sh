#!/usr/bin/env bash
# verify throughput (issue 22): a journal of SESSIONS counter sessions × EVENTS events (default 100,000 × 100, as the
# recorder writes them), then `feedback-host verify` on it, timed with its CPU time; the journal is removed after.
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${SESSIONS:-100000}
EVENTS=${EVENTS:-100}
scripts/release-binary.sh
swift build -c release --product VerifyBenchmark
BIN=$(swift build -c release --show-bin-path)
DIR=$(mktemp -d /tmp/verify-bench-XXXXXX)
trap 'rm -rf "$DIR"' EXIT
"$BIN/VerifyBenchmark" populate "$DIR" "$SESSIONS" "$EVENTS"
du -sh "$DIR"
/usr/bin/time -f "verify: %e s wall, %U s user, %S s system, %M KiB max RSS" \
    ../.build/release/feedback-host verify --data-dir "$DIR" --show 3
