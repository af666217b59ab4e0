#!/usr/bin/env bash
# Issue 30: what one posted event costs a server, split the way a profile cannot (docs/BENCHMARKS.md, session 15). For
# each server named: a fresh process in an empty directory on SERVER_CPU, SESSIONS counter sessions (the floor takes any
# path segment as a session), `wrk -t1 -cCONNECTIONS` posting {"type":"increment"} round-robin on LOAD_CPU, and over
# WINDOW seconds in the middle of the run: its user and kernel CPU a post (utime and stime from /proc/PID/stat), its
# share of its core, and, when perf can place uprobes (root), its mallocs and its Swift retains and releases a post,
# counted exactly (`perf stat` on the probes, not sampled; over a second run, which the probes slow, divided by that
# window's answers: its send(2) calls), and in a third run SQLite's statement steps and its error-log calls a post
# (uprobes on libsqlite3: a step has a cost of its own beyond its rows, and a log call a post is SQLite refusing or
# reporting something on every post). Servers: `floor` (JournalFloor; `floor --journal off`, its floor of a post with
# nothing durable, to set beside `BINARY --data-dir none`: each server's journal cost apart from the rest's, session
# 39), or a feedback-host binary followed by its flags up to the next `--`. With PHASES=1, a fourth run of each server
# records the window with `perf record --call-graph dwarf` (PHASES_HZ samples a second, 999; 2999 before session 33) and
# prints its CPU a post by phase of the post's way, thread and side (post-phases.py; the floor's by system call and
# library; the profiler's copies of the stacks slow the server, more the higher the rate, so compare phases, not totals;
# sessions 21 and 33). With LIBRARIES=1, one more run of each server is sampled without call chains (`perf record -F
# 2999` of the server's core, light enough to leave the rate as it is) and prints its CPU a post by library: the kernel,
# SQLite, libc, the binary and the Swift runtime, side by side for the floor and the builds (session 36: the kernel's,
# SQLite's and libc's parts of a durable post are the floor's; the gap is the Swift code's), then by thread, kernel and
# user apart, and the binary's own code by Swift module (session 42).
# Usage: scripts/post-anatomy.sh floor -- floor --journal off -- BINARY -- BINARY --data-dir none
#        (SERVER_CPU=0 LOAD_CPU=1 CONNECTIONS=64 SESSIONS=64 WINDOW=3 PORT=18559 PHASES=0 PHASES_HZ=999 LIBRARIES=0).
#        Copy binaries aside first.
set -euo pipefail
WINDOW=${WINDOW:-3}
PHASES=${PHASES:-0}
PHASES_HZ=${PHASES_HZ:-999}
LIBRARIES=${LIBRARIES:-0}
PORT=${PORT:-18559}
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
# Each measurement runs in a subshell of its own (its output is read back): its server's PID and directory live
# there, and so does the EXIT trap that stops the server and removes the directory, on success or failure.
# shellcheck source=post-server.sh
source "$SCRIPTS/post-server.sh"

MALLOC=
if command -v perf >/dev/null && { perf probe -l 2>/dev/null | grep -q 'probe_libc:malloc\b' ||
    perf probe -q -x "$(ldconfig -p | awk '/libc\.so\.6 .*x86-64/ {print $NF; exit}')" malloc 2>/dev/null; }; then
    MALLOC=probe_libc:malloc
fi
# Uprobes on FUNCTIONs of LIBRARY (perf names them GROUP:FUNCTION), each placed once: prints their `perf stat`
# arguments when every one is in place, nothing otherwise.
probes() { # library group function...
    local library=$1 group=$2 function events=
    shift 2
    for function in "$@"; do
        perf probe -l 2>/dev/null | grep -q "$group:$function\b" ||
            perf probe -q -x "$library" "$function" 2>/dev/null || true
        perf probe -l 2>/dev/null | grep -q "$group:$function\b" || return 0
        events="$events -e $group:$function"
    done
    echo "${events# }"
}
# Swift's reference counting, counted the same way (a feedback-host server; the floor has none): every
# swift_retain and swift_release, where a profile only samples them.
ARC=
SWIFT_CORE=$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift/linux/libswiftCore.so
[ -z "$MALLOC" ] || [ ! -f "$SWIFT_CORE" ] || ARC=$(probes "$SWIFT_CORE" probe_libswiftCore swift_retain swift_release)
# SQLite's statement executions and its error-log calls (libsqlite3, the floor's and the server's): a statement step
# has a fixed cost beyond its rows, and a log call a post means SQLite refused or reported something on every post
# (session 23 found two misuses a post this way).
SQLITE_PROBES=
SQLITE_LIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
[ -z "$MALLOC" ] || [ -z "$SQLITE_LIB" ] ||
    SQLITE_PROBES=$(probes "$SQLITE_LIB" probe_libsqlite3 sqlite3_step sqlite3_log)

measure() { # cpu|mallocs|phases command...: prints "posts/s user kernel share", "posts/s mallocs" or the phases
    local mode=$1 u0 s0 u1 s1 t0 t1 mallocs=0 rps
    shift
    trap stop_post_server EXIT
    start_post_server post-anatomy "$@"
    start_post_load $((WINDOW + 2))
    sleep 1
    read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$PID/stat")
    t0=$(date +%s.%N)
    if [ "$mode" = mallocs ]; then
        # The posts of the window are its answers: one send(2) each (the rate of the whole run would miscount them,
        # since the probes slow the window alone). Prints mallocs, then retains and releases (0 without Swift).
        # shellcheck disable=SC2086
        mallocs=$(perf stat -x, -e "$MALLOC" $ARC -e syscalls:sys_enter_sendto -p "$PID" -- sleep "$WINDOW" 2>&1 |
            awk -F, '/malloc/ {m = $1} /swift_retain/ {r = $1} /swift_release/ {l = $1} /sendto/ {n = $1}
                END { if (n > 0) printf "%.2f %.1f", m / n, (r + l) / n }')
    elif [ "$mode" = sqlite ]; then
        # A run of its own with these two probes alone: the many more of the count above slow the server enough to
        # shrink its group commits, and so to change the statements a post takes. Prints steps, then log calls.
        # shellcheck disable=SC2086
        mallocs=$(perf stat -x, $SQLITE_PROBES -e syscalls:sys_enter_sendto -p "$PID" -- sleep "$WINDOW" 2>&1 |
            awk -F, '/sqlite3_step/ {st = $1} /sqlite3_log/ {lg = $1} /sendto/ {n = $1}
                END { if (n > 0) printf "%.2f %.2f", st / n, lg / n }')
    elif [ "$mode" = libraries ]; then
        # The window's posts are the run's rate times its length, as for the CPU: a count of send(2) by tracepoint
        # beside the samples halved the rate (session 42), where the samples alone, without call chains, leave it.
        ls "/proc/$PID/task" >"$DIR/threads"
        taskset -c "$LOAD_CPU" perf record -q -F 2999 -a -C "$SERVER_CPU" -o "$DIR/libraries.data" -- sleep "$WINDOW" \
            >/dev/null 2>&1
        ls "/proc/$PID/task" >>"$DIR/threads"
        cat "/proc/$PID/comm" >"$DIR/comm"
    elif [ "$mode" = phases ]; then
        # The window's posts are its answers here too (the profiler slows the window alone). The server's core is
        # sampled, not its process: events that follow a process's threads cost it at every context switch, which a
        # durable post makes several of (shard, writer), and slowed it by half (session 33); the core's idle shows too.
        # perf itself runs beside the load.
        perf stat -x, -e syscalls:sys_enter_sendto -a -C "$SERVER_CPU" -o "$DIR/sends" -- sleep "$WINDOW" &
        taskset -c "$LOAD_CPU" perf record -q -F "$PHASES_HZ" --call-graph dwarf,16384 -a -C "$SERVER_CPU" \
            -o "$DIR/perf.data" -- sleep "$WINDOW" >/dev/null 2>&1
        wait $!
    else
        sleep "$WINDOW"
    fi
    read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$PID/stat")
    t1=$(date +%s.%N)
    wait "$LOAD"
    rps=$(awk '/Requests\/sec/ {print $2}' "$DIR/wrk.out")
    grep -q "Non-2xx" "$DIR/wrk.out" && echo "some answers were not 2xx: $*" >&2
    if [ "$mode" = libraries ]; then
        # Each library's samples of the server's process (its threads; not the kernel's own workers) over the
        # window's answers, in µs a post, then the same samples by thread and side (session 42: the main thread; the
        # others named as the process, feedback-host's shards and the floor's writer, which sends the answers too;
        # those named otherwise, Dispatch's workers, where feedback-host's journal writer runs), then the binary's
        # own code by Swift module (the module of each symbol's mangled name); each entry of 0.05 µs or more, largest
        # first. Its rate is its own: compare within a line, and lines of runs at like rates.
        # Summed from the rows of its threads (seen before and after the window), in the report's `tid:comm` column:
        # perf's own `--pid` and `--tid` filters drop the kernel's samples of some recordings. One report, one pass.
        local posts
        posts=$(awk -v rps="$rps" -v window="$WINDOW" 'BEGIN { printf "%d", rps * window }')
        perf report -i "$DIR/libraries.data" --sort pid,comm,dso,sym -n -q -g none 2>/dev/null |
            awk -v posts="$posts" -v window="$WINDOW" -v pid="$PID" -v process="$(cat "$DIR/comm")" \
                -v threads="$(sort -u "$DIR/threads" | paste -sd,)" '
                BEGIN { split(threads, list, ","); for (i in list) ours[list[i]] = 1 }
                NF >= 7 && posts > 0 {
                    split($3, t, ":")
                    if (!(t[1] in ours)) next
                    us = $2 / 2999 / posts * 1e6
                    total += us
                    library[$5] += us
                    who = t[1] == pid ? "main thread" : ($4 == process ? "named as the process" : "named otherwise")
                    side = $5 == "[kernel.kallsyms]" ? "kernel" : "user"
                    thread[who " " side] += us
                    if (side == "user" && $5 !~ /\.so/ && $5 != "[vdso]" && match($7, /^\$s[0-9]+/)) {
                        module[substr($7, RLENGTH + 1, substr($7, 3, RLENGTH - 2) + 0)] += us
                    }
                }
                function largest(values,    line, best, key) {
                    line = ""
                    while (1) {
                        best = ""
                        for (key in values) if (best == "" || values[key] > values[best]) best = key
                        if (best == "" || values[best] < 0.05) return line
                        line = line sprintf("  %s %.2f", best, values[best])
                        delete values[best]
                    }
                }
                END {
                    printf "    by library (a run of its own, %.0f posts/s), CPU us a post: all %.2f%s\n",
                        posts / window, total, largest(library)
                    printf "    by thread, CPU us a post:%s\n", largest(thread)
                    line = largest(module)
                    if (line != "") printf "    the binary'"'"'s own code by Swift module, CPU us a post:%s\n", line
                }'
        stop_post_server
        return
    fi
    if [ "$mode" = phases ]; then
        perf script -i "$DIR/perf.data" -F comm,ip,sym,dso 2>/dev/null |
            python3 "$SCRIPTS/post-phases.py" "$PHASES_HZ" "$(awk -F, '/sendto/ {print $1}' "$DIR/sends")" "$(basename "${SERVER_BINARY:-JournalFloor}")"
        stop_post_server
        return
    fi
    # CPU ticks are 1/100 s (USER_HZ); the window's posts are the run's rate times its length.
    awk -v r="$rps" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v t0="$t0" -v t1="$t1" -v m="$mallocs" -v mode="$mode" 'BEGIN {
        w = t1 - t0; n = r * w
        if (mode == "cpu") printf "%.0f %.2f %.2f %.0f\n", r, 1e4 * u / n, 1e4 * s / n, (u + s) / w
        else printf "%.0f %s\n", r, m
    }'
    stop_post_server
}

report() { # floor|binary [flags...]
    local rps user kernel share mallocs arc steps logs
    read -r rps user kernel share < <(measure cpu "$@")
    mallocs="-"
    arc="-"
    steps="-"
    logs="-"
    # A second run for the counts: the uprobes trap every call, which slows the server and would skew its CPU.
    [ -z "$MALLOC" ] || read -r _ mallocs arc < <(measure mallocs "$@")
    [ -n "$ARC" ] || arc="-"
    [ -z "$SQLITE_PROBES" ] || read -r _ steps logs < <(measure sqlite "$@")
    printf '%-28s posts/s %7.0f  user %5.2f us  kernel %5.2f us a post  core %3.0f%%  mallocs a post %s  retains+releases a post %s  SQLite steps %s, log calls %s a post\n' \
        "$(server_name "$@")" "$rps" "$user" "$kernel" "$share" "$mallocs" "$arc" "$steps" "$logs"
    [ "$LIBRARIES" = 0 ] || measure libraries "$@"
    [ "$PHASES" = 0 ] || measure phases "$@"
}
for_each_server report "$@"
[ -n "$MALLOC" ] || echo "(mallocs not counted: perf could not place a uprobe on glibc's malloc; run as root)"
