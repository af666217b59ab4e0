#!/usr/bin/env bash
# Builds the feedback-host to measure, and copies it to OUT when one is named (session 37); every script here that builds
# it builds it this way. An incremental release build can leave a
# module's specialisations of another module's `@inlinable` code as they were: `feedback-host` reaches SessionRuntime
# through FeedbackService's `@_exported` import, and after a change to the body of `SystemEvents.decode` (inlinable)
# the build did not compile `feedback-host` again, so the binary's post path (`SessionPaths`, specialised where
# `BuiltInSystems` registers the systems) still ran the old code while every library was new. This removes the
# executable's objects first, so that it is always compiled again; ALL=1 removes those of every module of this package
# (a release build of all of them, a few minutes on two cores), for a change whose inlined code other modules hold.
# Usage: scripts/release-binary.sh [OUT]   (ALL=0)
set -euo pipefail
OUT=${1:-}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD="$ROOT/.build/release"
if [ "${ALL:-0}" = 1 ]; then
    for dir in "$ROOT"/Sources/*/; do
        module=$(basename "$dir" | tr '-' '_')
        rm -f "$BUILD/$module.build/"*.o
    done
else
    rm -f "$BUILD/feedback_host.build/"*.o
fi
swift build --package-path "$ROOT" -c release --product feedback-host >&2
[ -n "$OUT" ] || exit 0
cp "$BUILD/feedback-host" "$OUT"
echo "built $OUT ($(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet || echo ', with uncommitted changes'))" >&2
