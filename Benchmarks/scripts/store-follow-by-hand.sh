#!/bin/bash
# Builds the StoreFollow benchmark's modules with `swiftc -O -wmo` by hand, reusing the debug build's macro plugin
# (.build/debug/FeedbackMacros-tool, from `swift build` at the package root): SwiftPM's first release build compiles
# swift-syntax in release, which can take over half an hour on a busy machine. Then runs it like `make client`.
# docs/BENCHMARKS.md, "A store following a busy session". Usage: scripts/store-follow-by-hand.sh [SECONDS] [RATE]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
PLUGIN="$ROOT/.build/debug/FeedbackMacros-tool#FeedbackMacros"
build() {
    local module=$1 directory=$2
    shift 2
    swiftc -O -wmo -swift-version 6 -package-name FeedbackHost -module-name "$module" -parse-as-library \
        -emit-module -emit-module-path "$OUT/$module.swiftmodule" -I "$OUT" -c $(find "$directory" -name '*.swift') \
        -o "$OUT/$module.o" "$@"
}
build Logging "$ROOT/.build/checkouts/swift-log/Sources/Logging"
for module in FeedbackJSON FeedbackLoop Upstream; do build $module "$ROOT/Sources/$module"; done
for module in SystemKit Systems; do build $module "$ROOT/Sources/$module" -load-plugin-executable "$PLUGIN"; done
for module in FeedbackHostClient FeedbackHostTesting; do build $module "$ROOT/Sources/$module"; done
swiftc -O -swift-version 6 -I "$OUT" "$ROOT/Benchmarks/Sources/StoreFollow/main.swift" "$OUT"/*.o -o "$OUT/StoreFollow"
FEEDBACKHOST_BINARY=${FEEDBACKHOST_BINARY:-$ROOT/.build/debug/feedback-host} "$OUT/StoreFollow" "${1:-10}" "${2:-1000}"
