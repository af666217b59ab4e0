#!/usr/bin/env python3
"""The first request to each of SESSIONS busy sessions after their replica was SIGKILLed (issue 20), on a PostgreSQL
journal: a release feedback-host (BINARY, the shipped defaults with --journal-url JOURNAL_URL, an empty database)
gets SESSIONS counter sessions and DURATION seconds of wrk posting increments round-robin (so each session has had a
snapshot every 100 events, and its deleted events are still in the index until a vacuum), is SIGKILLed, and a second
server on the same database answers one GET per session over one keep-alive connection: client-side latency, which
includes the activation (taking the session over, reading its snapshot and its events since).

Usage (from Benchmarks/): JOURNAL_URL=postgres://USER@127.0.0.1:PORT/DB scripts/busy-takeover.py
       (BINARY=../.build/release/feedback-host SESSIONS=64 DURATION=8)
"""
import http.client
import json
import os
import signal
import subprocess
import time

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.environ.get("BINARY", os.path.join(BENCH, "..", ".build", "release", "feedback-host"))
JOURNAL_URL = os.environ["JOURNAL_URL"]
SESSIONS = int(os.environ.get("SESSIONS", "64"))
DURATION = int(os.environ.get("DURATION", "8"))


def start():
    server = subprocess.Popen([BINARY, "--port", "0", "--journal-url", JOURNAL_URL],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(server.stdout.readline().strip().rsplit(":", 1)[1])
    return server, port


def main():
    server, port = start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        ids = []
        for _ in range(SESSIONS):
            connection.request("POST", "/v1/sessions", body=b'{"system":"counter"}',
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            ids.append(json.loads(response.read())["id"])
        subprocess.run(["wrk", "-t1", "-c64", f"-d{DURATION}s", "-s", "scripts/post-session-event.lua",
                        f"http://127.0.0.1:{port}", "--"] + ids, cwd=BENCH, check=True, stdout=subprocess.DEVNULL)
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait()
    server, port = start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        latencies = []
        for id in ids:
            began = time.perf_counter()
            connection.request("GET", f"/v1/sessions/{id}")
            response = connection.getresponse()
            body = json.loads(response.read())
            latencies.append((time.perf_counter() - began) * 1000)
            assert response.status == 200, response.status
        ordered = sorted(latencies)
        print(f"{SESSIONS} sessions after {DURATION} s of posts (the last at revision {body['rev']}): first GET "
              f"p50 {ordered[len(ordered) // 2]:.2f} ms, p99 {ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]:.2f} ms, "
              f"max {ordered[-1]:.2f} ms")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
