#!/usr/bin/env python3
"""Where a durable post's CPU goes, by phase of its way: reads `perf script -F comm,ip,sym,dso` of a server's core recorded
with `--call-graph dwarf` (post-anatomy.sh with PHASES=1 records it, the floor's too) and gives each sample to the
first phase, in the order below, one of its frames belongs to (what none of ours takes, to its system call or
library), per thread (the shard's; Dispatch's, where the journal's writer runs) and per side (user or kernel), printed
as microseconds a post: samples / frequency / posts.

Usage: perf script -i perf.data -F comm,ip,sym,dso | post-phases.py FREQUENCY POSTS BINARY_NAME
"""
import collections
import sys

# (phase, substrings of a frame that mark it): the first phase with a frame in the stack takes the sample.
PHASES = [
    ("compaction tick", ["compactOnQueue"]),
    ("checkpoint", ["sqlite3Checkpoint"]),
    ("SQLite commit", ["sqlite3PagerCommitPhaseOne", "sqlite3VdbeHalt"]),
    ("answers handed back", ["RecorderC7settled", "LateAnswersC3add"]),
    ("records written (SQLite insert, checksum)", ["StoreC5write", "StoreC6commit"]),
    ("group commit, the rest", ["commitBatch", "commitNext"]),
    ("recorder step", ["RecorderC6record"]),
    ("batch end", ["RecorderC10batchEnded"]),
    ("answer sent (send(2))", ["ShardC5flush"]),
    ("access log line", ["AccessLogC6record"]),
    ("request metrics", ["ServerMetricsC6record"]),
    ("answer written (its head, the output buffer)", ["ShardC7respond", "ShardC5write"]),
    ("late answers delivered, the rest", ["ShardC7delivery"]),
    ("crash marks", ["CrashMarks"]),
    ("guard", ["GuardC11stepStarted"]),
    ("state encoded", ["encodeState"]),
    ("loop", ["FeedbackLoop0B0C4send"]),
    ("reduce, trial, cache (the rest of submit)", ["runQueue", "submitOnce", "postNow"]),
    ("body parsed as JSON", ["jsonBody", "JSONParser"]),
    # SessionService.session(for:) and SessionHost's lookups (mangled names abbreviate a repeated module name:
    # SessionHost in SessionRuntime is `0A4HostC`).
    ("session id and lookup", ["SessionB0C7session3for", "0A4HostC7session", "0A4HostC06activeA0_"]),
    ("session: route and post", ["SystemA0C5route", "postEvents"]),
    ("head parsed", ["RequestDecoderV6decode", "RequestParser"]),
    ("route matched", ["RouterV5match"]),
    ("HTTP: the rest of a request", ["ShardC7process"]),
    ("recv(2)", ["ShardC8readable"]),
    ("shard loop", ["waitForEvents"]),
    ("idle", ["pv_native_safe_halt", "do_idle"]),
    # What none of ours takes, by system call or library: all of JournalFloor's (whose functions are not ours).
    ("sendto(2)", ["__x64_sys_sendto"]),
    ("recvfrom(2)", ["__x64_sys_recvfrom"]),
    ("fdatasync(2)", ["__x64_sys_fdatasync"]),
    ("pwrite64(2)", ["__x64_sys_pwrite64"]),
    ("epoll_wait(2)", ["__x64_sys_epoll_wait"]),
    ("SQLite, the rest", ["libsqlite3"]),
    ("formatting (snprintf, strftime)", ["printf", "strftime", "gmtime"]),
]


def main() -> None:
    frequency, posts, binary = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3][:15]
    counts: collections.Counter = collections.Counter()
    for block in sys.stdin.read().split("\n\n"):
        lines = [line.strip() for line in block.strip().split("\n") if line.strip()]
        if len(lines) < 2:
            continue
        # The shards run on threads of their own (named as the process, cut to 15 characters); JournalFloor's two
        # threads both carry its name.
        comm = lines[0].split()[0]
        if comm == binary:
            thread = "floor" if binary == "JournalFloor" else "shard"
        else:
            thread = "dispatch" if "overcommit" in comm else "idle" if comm == "swapper" else "other"
        side = "kernel" if "[kernel.kallsyms]" in lines[1] else "user"
        stack = " ".join(lines[1:])
        phase = next((name for name, marks in PHASES if any(mark in stack for mark in marks)), "other")
        counts[(thread, side, phase)] += 1
    for (thread, side, phase), count in sorted(counts.items(), key=lambda item: -item[1]):
        microseconds = count / frequency / posts * 1e6
        if microseconds >= 0.02:
            print(f"    {thread:9} {side:7} {phase:44} {microseconds:6.3f} us a post")


if __name__ == "__main__":
    main()
