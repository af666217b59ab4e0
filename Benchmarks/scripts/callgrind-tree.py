#!/usr/bin/env python3
"""Reads a callgrind dump (`post-instructions.sh` keeps none; run it with KEEP=DIR) and prints instructions per post.

Session 26 steered a durable post's work with these three views, which callgrind_annotate's flat list does not give:
  callgrind-tree.py DUMP POSTS callees REGEX   each function matching REGEX: inclusive and self cost, and its callees
  callgrind-tree.py DUMP POSTS callers REGEX   who calls the functions matching REGEX, and their calls a post
  callgrind-tree.py DUMP POSTS self [N]        the N functions with the most instructions of their own
  callgrind-tree.py DUMP POSTS tree REGEX [MIN] the first function matching REGEX and its callees' callees, down to
                                               MIN instructions a post (100); a callee called from several places is
                                               split in proportion to the instructions each caller's calls cost
POSTS is the number of posts the dump covers (`wrk`'s "requests in"); REGEX matches mangled names (swift demangle
prints the results). Names are demangled with `swift demangle --compact --simplified` when it is on the PATH.
"""
import collections
import re
import subprocess
import sys


def demangle(names):
    try:
        out = subprocess.run(["swift", "demangle", "--compact", "--simplified"], input="\n".join(names),
                             capture_output=True, text=True, check=True).stdout.split("\n")
        return out[:len(names)]
    except (OSError, subprocess.CalledProcessError):
        return list(names)


def read(path):
    """Self cost per function, inclusive cost and call count per (caller, callee)."""
    names, own = {}, collections.Counter()
    calls, counts = collections.defaultdict(collections.Counter), collections.defaultdict(collections.Counter)
    current = callee = None
    pending = None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        match = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?$", line)
        if match:
            kind, key, name = match.groups()
            if name:
                names[key] = name
            if kind == "fn":
                current = names.get(key, key)
            else:
                callee = names.get(key, key)
            continue
        if line.startswith("calls="):
            pending = int(line[6:].split()[0])
            continue
        if line and (line[0].isdigit() or line[0] in "+-*"):
            parts = line.split()
            if len(parts) < 2:
                continue
            cost = int(parts[1])
            if pending is not None:
                calls[current][callee] += cost
                counts[current][callee] += pending
                pending = None
            else:
                own[current] += cost
    return own, calls, counts


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    path, posts, mode = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    own, calls, counts = read(path)
    if mode == "self":
        top = own.most_common(int(sys.argv[4]) if len(sys.argv) > 4 else 40)
        for (name, cost), shown in zip(top, demangle([n for n, _ in top])):
            print(f"{cost / posts:8.0f}  {shown[:150]}")
    elif mode == "callees":
        pattern = re.compile(sys.argv[4])
        for name in sorted(n for n in set(own) | set(calls) if pattern.search(n)):
            inclusive = own[name] + sum(calls[name].values())
            print(f"== {demangle([name])[0][:150]}\n   inclusive {inclusive / posts:.0f}  self {own[name] / posts:.0f}")
            top = [(c, v) for c, v in calls[name].most_common(20) if v / posts >= 20]
            for (callee, cost), shown in zip(top, demangle([c for c, _ in top])):
                print(f"   {cost / posts:8.0f}  {shown[:140]}")
    elif mode == "callers":
        pattern = re.compile(sys.argv[4])
        found = collections.Counter()
        for caller, callees in counts.items():
            for callee, n in callees.items():
                if pattern.search(callee):
                    found[(caller, callee)] += n
        top = found.most_common(25)
        shown = demangle([name for pair, _ in top for name in pair])
        for index, ((caller, callee), n) in enumerate(top):
            print(f"{n / posts:7.2f} calls a post  {shown[2 * index][:90]}  ->  {shown[2 * index + 1][:60]}")
    elif mode == "tree":
        pattern = re.compile(sys.argv[4])
        least = float(sys.argv[5]) if len(sys.argv) > 5 else 100
        root = next((n for n in sorted(set(own) | set(calls)) if pattern.search(n)), None)
        if root is None:
            sys.exit(f"no function matches {sys.argv[4]}")
        rows = []

        def walk(name, cost, depth, seen):
            rows.append((depth, cost, name))
            total = own[name] + sum(calls[name].values())
            if total == 0 or name in seen:
                return
            for callee, part in calls[name].most_common():
                share = cost * part / total
                if share / posts >= least:
                    walk(callee, share, depth + 1, seen | {name})

        walk(root, own[root] + sum(calls[root].values()), 0, frozenset())
        for (depth, cost, _), shown in zip(rows, demangle([n for _, _, n in rows])):
            print(f"{cost / posts:8.0f}  {'  ' * depth}{shown[:140 - 2 * depth]}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
