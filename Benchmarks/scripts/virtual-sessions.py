#!/usr/bin/env python3
"""Virtual sessions (issue 19): the release feedback-host on a journal of SESSIONS counter sessions written by
`JournalBenchmark populate` (each: creation, 5 events, a snapshot at 3), with `--sessions-max-active ACTIVE_CAP`.

Measures, with the shipped defaults otherwise (journal per-commit, access log on):
- start-up: exec to the "listening on" line, and to the first 200 of /readyz; RSS then;
- the first request to a passive session: GET of FIRST distinct random sessions over one keep-alive connection,
  each an activation (the journal read through the indexes, the fold, the loop's start); p50, p99, max;
- the same GETs again, now active, for comparison;
- RSS after ACTIVATE distinct sessions were activated (past the cap the least recently used are passivated).

Usage (from Benchmarks/): scripts/virtual-sessions.py
    (SESSIONS=1000000 ACTIVE_CAP=50000 FIRST=2000 ACTIVATE=60000 SETTLED=1; SETTLED=0 for a journal left by a crash)
"""
import http.client
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

SESSIONS = int(os.environ.get("SESSIONS", "1000000"))
ACTIVE_CAP = int(os.environ.get("ACTIVE_CAP", "50000"))
FIRST = int(os.environ.get("FIRST", "2000"))
ACTIVATE = int(os.environ.get("ACTIVATE", "60000"))
# SETTLED=1: every session left memory settled (a passivation or a graceful shutdown); 0: after a crash.
SETTLED = os.environ.get("SETTLED", "1") == "1"
BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH)


def session_id(number):
    digits = str(number)
    return "A" * (21 - len(digits)) + digits + "A"


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def timed_gets(port, ids):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    latencies = []
    for session in ids:
        start = time.perf_counter()
        connection.request("GET", f"/v1/sessions/{session}")
        response = connection.getresponse()
        response.read()
        latencies.append((time.perf_counter() - start) * 1000)
        assert response.status == 200, (session, response.status)
    connection.close()
    return latencies


def main():
    subprocess.run(["swift", "build", "-c", "release", "--product", "JournalBenchmark"], cwd=BENCH, check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["swift", "build", "-c", "release", "--product", "feedback-host"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    bin_path = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=BENCH, check=True,
                              capture_output=True, text=True).stdout.strip()
    work = tempfile.mkdtemp(prefix="virtual-sessions-")
    server = None
    try:
        start = time.monotonic()
        subprocess.run([bin_path + "/JournalBenchmark", "populate", work + "/data", str(SESSIONS)]
                       + (["settled"] if SETTLED else []), check=True)
        journal_bytes = sum(os.path.getsize(os.path.join(work, "data", name)) for name in os.listdir(work + "/data"))
        print(f"populated {SESSIONS} {'settled ' if SETTLED else ''}sessions in {time.monotonic() - start:.1f} s; journal {journal_bytes / 2**20:.0f} MiB")

        start = time.monotonic()
        server = subprocess.Popen(
            [ROOT + "/.build/release/feedback-host", "--port", "0", "--data-dir", work + "/data",
             "--sessions-max-active", str(ACTIVE_CAP)],
            stdout=subprocess.PIPE, stderr=open(work + "/server.log", "w"), text=True)
        line = server.stdout.readline().strip()
        listening = time.monotonic() - start
        port = int(line.rsplit(":", 1)[1])
        while True:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("GET", "/readyz")
            if connection.getresponse().status == 200:
                break
            time.sleep(0.01)
        ready = time.monotonic() - start
        print(f"start-up: listening after {listening:.2f} s, ready after {ready:.2f} s; RSS {rss_kib(server.pid) / 1024:.1f} MiB")

        ids = [session_id(number) for number in random.Random(19).sample(range(SESSIONS), max(FIRST, ACTIVATE))]
        first = timed_gets(port, ids[:FIRST])
        again = timed_gets(port, ids[:FIRST])
        print(f"first request to a passive session ({FIRST}): p50 {percentile(first, 0.5):.2f} ms, "
              f"p99 {percentile(first, 0.99):.2f} ms, max {max(first):.2f} ms")
        print(f"the same requests, active: p50 {percentile(again, 0.5):.2f} ms, p99 {percentile(again, 0.99):.2f} ms")
        start = time.monotonic()
        timed_gets(port, ids[FIRST:ACTIVATE])
        elapsed = time.monotonic() - start
        print(f"{ACTIVATE} sessions activated in all ({ACTIVATE - FIRST} in {elapsed:.1f} s), cap {ACTIVE_CAP}: "
              f"RSS {rss_kib(server.pid) / 1024:.1f} MiB")
        metrics = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        metrics.request("GET", "/metrics")
        for sample in metrics.getresponse().read().decode().splitlines():
            if sample.startswith(("feedbackhost_sessions ", "feedbackhost_sessions_passive ",
                                  "feedbackhost_session_passivations_total", "feedbackhost_session_activations_total")):
                print("  " + sample)
    finally:
        if server is not None:
            server.terminate()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
