#!/usr/bin/env bash
# Issue 30: whose reference counts a posted event changes, and where (docs/BENCHMARKS.md, "Session 32", 2026-12-01).
# `post-anatomy.sh` counts a post's swift_retain and swift_release calls (about 330); a profile shows they take more of
# the core than any function of ours, but not of which objects. This places uprobes on both with three arguments, the
# object, its first word (its type's metadata) and the metadata's type descriptor (a class's, 40 bytes in without
# Objective-C), records them with their call chains (frame pointers) on SERVER_CPU for WINDOW seconds while `wrk -t1
# -cCONNECTIONS` posts {"type":"increment"} to SESSIONS counter sessions of a fresh server (shipped defaults, an empty
# directory), and prints per post: the calls by the object's type (the metadata's symbol in the binary or in the Swift
# runtime, or for a generic class's metadata made at run time its descriptor's; `nil` for a call on no object, which
# costs no atomic operation), then for the TOP types the functions that called (the first frame outside the runtime's
# retain and release entry points, and with DEPTH=N the N-1 frames above it, joined by `<`). The probes slow the server
# twenty-fold: the counts a post are exact, the rate is not. Needs root (uprobes) and perf.
# Usage: scripts/post-arc.sh BINARY [FLAGS...]   (SERVER_CPU=0 LOAD_CPU=1 CONNECTIONS=64 SESSIONS=64 WINDOW=1 TOP=6
#        CALLERS=8 DEPTH=1 PORT=18583). Copy the binary aside first.
set -euo pipefail
WINDOW=${WINDOW:-1}
TOP=${TOP:-6}
CALLERS=${CALLERS:-8}
DEPTH=${DEPTH:-1}
PORT=${PORT:-18583}
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
command -v perf >/dev/null || { echo "perf is needed (apt-get install linux-perf)" >&2; exit 1; }
[ $# -ge 1 ] || { echo "usage: $0 BINARY [FLAGS...]" >&2; exit 2; }
SWIFT_CORE=$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift/linux/libswiftCore.so
[ -f "$SWIFT_CORE" ] || { echo "no libswiftCore.so at $SWIFT_CORE" >&2; exit 1; }
# The probes, placed once (perf names them probe_libswiftCore:NAME).
for probe in "arc_retain=swift_retain" "arc_release=swift_release"; do
    # An older probe of that name without the descriptor goes first.
    perf probe -l 2>/dev/null | grep "probe_libswiftCore:${probe%%=*}\b" | grep -q descriptor40 ||
        perf probe -q -d "probe_libswiftCore:${probe%%=*}" 2>/dev/null || true
    perf probe -l 2>/dev/null | grep -q "probe_libswiftCore:${probe%%=*}\b" ||
        perf probe -q -x "$SWIFT_CORE" --add \
            "$probe object=%di:u64 type=+0(%di):u64 descriptor40=+40(+0(%di)):u64" 2>/dev/null ||
        { echo "perf could not place a uprobe on ${probe#*=} (run as root)" >&2; exit 1; }
done
# shellcheck source=post-server.sh
source "$SCRIPTS/post-server.sh"
trap stop_post_server EXIT
start_post_server post-arc "$@"
start_post_load $((WINDOW + 4))
sleep 1.5
cp "/proc/$PID/maps" "$DIR/maps"
perf record -q -g -e probe_libswiftCore:arc_retain -e probe_libswiftCore:arc_release -e syscalls:sys_enter_sendto \
    -a -C "$SERVER_CPU" -o "$DIR/perf.data" -- sleep "$WINDOW" >/dev/null 2>&1
wait "$LOAD"
perf script -i "$DIR/perf.data" -F event,trace,ip,sym 2>/dev/null >"$DIR/script"
python3 - "$DIR/maps" "$DIR/script" "$TOP" "$CALLERS" "$DEPTH" <<'EOF'
import bisect, collections, subprocess, sys

maps_path, script_path, top, callers, depth = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])

# Each mapped Swift file's symbols (its text and data), to name a type's metadata by the symbol at or before it.
regions = []  # (start, end, file offset of start, path)
for line in open(maps_path):
    parts = line.split()
    if len(parts) < 6 or not parts[5].startswith("/"):
        continue
    start, end = (int(x, 16) for x in parts[0].split("-"))
    regions.append((start, end, int(parts[2], 16), parts[5]))
tables = {}
def symbols(path):
    if path not in tables:
        out = subprocess.run(["nm", "-n", path], capture_output=True, text=True).stdout
        rows = []
        for row in out.splitlines():
            fields = row.split()
            if len(fields) == 3:
                try:
                    rows.append((int(fields[0], 16), fields[2]))
                except ValueError:
                    pass
        tables[path] = ([a for a, _ in rows], [n for _, n in rows])
    return tables[path]
def base(path):  # the address the file's first mapping (offset 0) starts at: symbols are relative to it
    return min(s - o for s, _, o, p in regions if p == path)
def symbol_at(address, exact=False):
    for start, end, _, path in regions:
        if start <= address < end:
            addresses, names = symbols(path)
            offset = address - base(path)
            i = bisect.bisect_right(addresses, offset) - 1
            if exact and (i < 0 or addresses[i] != offset):
                return None
            return names[i] if i >= 0 else path
    return None
def name_of(address, descriptor):
    if address == 0:
        return "nil (no object)"
    # Metadata is named by its own symbol; metadata made at run time (a generic class's), or laid out in the binary's
    # data without a symbol (a specialised generic class's), by its class's type descriptor: a symbol ending in `Mn`
    # exactly where the descriptor field points (a closure's context has no such field: what lies there names nothing).
    at = symbol_at(address)
    if at and at.endswith(("N", "Mf")):
        return at
    described = symbol_at(descriptor, exact=True) if descriptor else None
    if described and described.endswith("Mn"):
        return described
    return at or "metadata made at run time (no class descriptor found)"

posts = 0
by_type = collections.Counter()
by_caller = collections.defaultdict(collections.Counter)
event = None
runtime = ("swift_retain", "swift_release", "swift_bridgeObjectRetain", "swift_bridgeObjectRelease",
           "swift_retain_n", "swift_release_n")
for line in open(script_path):
    text = line.strip()
    if not text:
        event = None
        continue
    if "sys_enter_sendto" in text:
        posts += 1
        event = None
        continue
    if "probe_libswiftCore:arc_" in text:
        kind = "retain" if "arc_retain" in text else "release"
        fields = dict(f.split("=", 1) for f in text.split() if "=" in f)
        event = [kind, name_of(int(fields.get("type", "0")), int(fields.get("descriptor40", "0"))), []]
        by_type[event[1]] += 1
        continue
    if event is None or len(event[2]) == depth:
        continue
    frame = text.split(None, 1)
    symbol = frame[1].split()[0] if len(frame) > 1 else "?"
    if not event[2] and symbol in runtime:
        continue
    event[2].append(symbol)
    if len(event[2]) == depth:
        by_caller[event[1]][(event[0], tuple(event[2]))] += 1

if posts == 0:
    sys.exit("post-arc: no post answered in the window")
names = list(by_type)
callers_names = sorted({f for t in names for c in by_caller[t] for f in c[1]})
demangled = subprocess.run(["swift", "demangle", "--compact", "--simplified"], input="\n".join(names + callers_names),
                           capture_output=True, text=True).stdout.splitlines()
shown = dict(zip(names + callers_names, demangled))
for name in names:  # a symbol that is no type's metadata only tells where the metadata lies
    if name in shown and "nominal type descriptor" in shown[name] and not shown[name].startswith("got."):
        shown[name] = "an instance of " + shown[name].replace("nominal type descriptor for ", "")
    elif name in shown and "metadata" not in shown[name] and not name.startswith(("nil", "metadata made")):
        shown[name] = "a closure's context or a box (its metadata in the binary's data, after " + shown[name] + ")"
total = sum(by_type.values())
print(f"{posts} posts in the window; retains and releases a post: {total / posts:.1f}")
for name, count in by_type.most_common():
    if count / posts < 0.5:
        break
    print(f"  {count / posts:7.1f}  {shown.get(name, name)[:110]}")
for name, _ in by_type.most_common(top):
    print(f"== {shown.get(name, name)[:110]}")
    for (kind, frames), count in by_caller[name].most_common(callers):
        chain = " < ".join(shown.get(f, f)[:110 if depth == 1 else 60] for f in frames)
        print(f"  {count / posts:7.2f}  {kind:7}  {chain}")
EOF
