#!/usr/bin/env bash
# Issue 30: no module of Sources/ over 6,000 lines. Counts the lines of the .swift files under each directory directly
# under Sources/ and fails, naming each module over the limit, when one is. The limit is the first argument, else
# MODULE_LINE_LIMIT, else 6000. Run by `make lint`.
set -euo pipefail
limit="${1:-${MODULE_LINE_LIMIT:-6000}}"
[[ "$limit" =~ ^[0-9]+$ ]] || { echo "check-module-sizes: the limit must be a whole number, not '$limit'" >&2; exit 2; }
cd "$(dirname "$0")/../Sources"
status=0 largest="" most=0
for module in */; do
    module="${module%/}"
    lines=$(find "$module" -type f -name '*.swift' -exec cat {} + | wc -l)
    if ((lines > most)); then largest="$module" most=$lines; fi
    if ((lines > limit)); then
        echo "check-module-sizes: $module has $lines lines of Swift, over the limit of $limit: cut it along its layers" >&2
        status=1
    fi
done
((status == 0)) && echo "check-module-sizes: every module of Sources/ is at most $limit lines (largest: $largest, $most)"
exit "$status"
