#!/usr/bin/env python3
"""RSS per idle session: starts the release feedback-host, creates N counter sessions over one keep-alive
connection, and reports the growth of the server's resident memory per session (from /proc/PID/status).

Usage: session-rss.py [N] (default 100000). Run by `make -C Benchmarks sessions`.
"""
import http.client
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.path.join(ROOT, ".build", "release", "feedback-host")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def create(conn, count):
    body = json.dumps({"system": "counter"})
    for _ in range(count):
        conn.request("POST", "/v1/sessions", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        if response.status != 201:
            raise RuntimeError(f"create answered {response.status}")


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    server = subprocess.Popen(
        [BINARY, "--port", "0", "--data-dir", "none", "--log-level", "error", "--sessions-max-active", str(count + 10_000)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        port = int(server.stdout.readline().strip().rsplit(":", 1)[1])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        create(conn, 1_000)  # warm up allocator arenas, caches and the connection
        time.sleep(0.5)
        before = rss_kib(server.pid)
        start = time.monotonic()
        create(conn, count)
        elapsed = time.monotonic() - start
        time.sleep(0.5)
        after = rss_kib(server.pid)
        per_session = (after - before) * 1024 / count
        print(f"sessions: {count}  created in {elapsed:.1f} s ({count / elapsed:,.0f}/s over one connection)")
        print(f"RSS: {before} KiB -> {after} KiB  = {per_session:,.0f} bytes per idle counter session")
        print("state: CounterSystem.State is one Int (8 bytes; JSON {\"count\":0} is 11 bytes)")
    finally:
        server.terminate()
        server.wait(timeout=15)


if __name__ == "__main__":
    main()
