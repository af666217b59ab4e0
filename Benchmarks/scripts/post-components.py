#!/usr/bin/env python3
"""Reads `perf script -F comm,tid,ip,sym` of a server's core (call stacks unwound with DWARF) and prints the share of
the core each part of a durable post took, inclusive: every sample goes to the first component below whose pattern
matches a frame of its stack (the order settles overlaps: a COMMIT inside the journal's batch counts as the COMMIT).
With the posts a second of the run (`--rate`), also the microseconds a post.

Usage: perf script -i DATA -F comm,tid,ip,sym | post-components.py [--rate POSTS_PER_SECOND] [--other N]
`--other N` lists the N most frequent leaf functions of the samples no component took.
"""
import argparse
import re
import sys

# (component, pattern of a mangled or plain frame name); the first match wins. Swift's mangled names abbreviate a
# module's name where it repeats (SessionHost in SessionRuntime is `0A4HostC`), so the patterns are read off
# `perf script`'s output.
COMPONENTS = [
    ("writer: the compaction tick", r"compactOnQueue"),
    ("writer: records other than events (snapshots)", r"B5StoreC5writeyy"),
    ("writer: COMMIT and BEGIN (the WAL's writes, fsync)", r"SQLiteStatementC3runyyAA0B5ErrorVYKF"),
    ("writer: the events' INSERT (EventRows)", r"EventRowsC5write"),
    ("writer: answers handed back (SessionRecorder.settled)", r"RecorderC7settled"),
    ("writer: the rest of a group commit", r"B0C11commitBatch|B0C10commitNext"),
    ("shard: the answer's send(2)", r"ShardC5flush"),
    ("shard: the access log line", r"AccessLogC6record"),
    ("shard: the request metrics", r"ServerMetricsC6record"),
    ("shard: the answer written (respond, write)", r"ShardC7respond|ShardC5write"),
    ("shard: the rest of a late answer's delivery", r"ShardC7deliver"),
    ("shard: the recorder (record, batch end, append)", r"RecorderC6record|RecorderC10batchEnded|RecorderC6append|stampHeld"),
    ("shard: the state's encoding", r"encodeState"),
    ("shard: reduce, loop, cache, trial (the rest of submit)", r"runQueue|submitOnce|postNow"),
    ("shard: the body's JSON", r"jsonBody|JSONParser"),
    # SessionService.session(for:): the id parsed, then SessionHost.session(_:) (names mangled with substitutions).
    ("shard: the session's id and lookup", r"SessionB0C7session3for|0A4HostC7session|0A4HostC06activeA0_"),
    ("shard: the rest of the handler", r"postEvents|tokenChecked|handler"),
    ("shard: the route's match", r"RouterV5match"),
    ("shard: the head's parse", r"RequestDecoderV6decode|RequestParser"),
    ("shard: the rest of a request (begin, dispatch)", r"ShardC5begin|ShardC8dispatch|ShardC7process"),
    ("shard: recv(2)", r"ShardC8readable"),
    ("shard: its loop (epoll_wait, wake-ups)", r"waitForEvents|ShardC5start"),
    ("idle", r"pv_native_safe_halt|do_idle|cpu_startup_entry"),
    # What is left, by system call or library: all of the floor (JournalFloor, whose functions are not ours), the
    # rest of a feedback-host server.
    ("any: send(2)", r"__x64_sys_sendto"),
    ("any: recv(2)", r"__x64_sys_recvfrom"),
    ("any: fdatasync(2)", r"__x64_sys_fdatasync"),
    ("any: pwrite64(2)", r"__x64_sys_pwrite64"),
    ("any: epoll_wait(2)", r"__x64_sys_epoll_wait"),
    ("any: SQLite", r"^sqlite3"),
    ("any: formatting (snprintf, strftime)", r"printf|strftime|gmtime"),
]


def stacks(lines):
    """Yields each sample's frames, leaf first."""
    frames = None
    for line in lines:
        if not line.strip():
            if frames is not None:
                yield frames
            frames = None
        elif not line[0].isspace():
            if frames is not None:
                yield frames
            frames = []
        elif frames is not None:
            parts = line.split(None, 1)
            frames.append(parts[1].strip() if len(parts) > 1 else "?")
    if frames is not None:
        yield frames


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=float, default=0)
    parser.add_argument("--other", type=int, default=0)
    options = parser.parse_args()
    patterns = [(name, re.compile(pattern)) for name, pattern in COMPONENTS]
    counts, leaves, total = {}, {}, 0
    for frames in stacks(sys.stdin):
        total += 1
        name = next((name for name, pattern in patterns if any(pattern.search(f) for f in frames)), "other")
        counts[name] = counts.get(name, 0) + 1
        if name == "other" and frames:
            leaves[frames[0]] = leaves.get(frames[0], 0) + 1
    if total == 0:
        sys.exit("no samples")
    for name, count in sorted(counts.items(), key=lambda item: -item[1]):
        share = count / total
        micro = f"  {share * 1e6 / options.rate:6.2f} µs a post" if options.rate else ""
        print(f"{100 * share:6.2f} %{micro}  {name}")
    print(f"{total} samples" + (f", {options.rate:.0f} posts/s" if options.rate else ""))
    for leaf, count in sorted(leaves.items(), key=lambda item: -item[1])[: options.other]:
        print(f"  other: {100 * count / total:5.2f} %  {leaf[:140]}")


if __name__ == "__main__":
    main()
