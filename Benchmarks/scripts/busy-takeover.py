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
import importlib.util
import json
import os
import signal
import subprocess

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.environ.get("BINARY", os.path.join(BENCH, "..", ".build", "release", "feedback-host"))
JOURNAL_URL = os.environ["JOURNAL_URL"]
SESSIONS = int(os.environ.get("SESSIONS", "64"))
DURATION = int(os.environ.get("DURATION", "8"))

# The timed GETs and the percentile of virtual-sessions.py (its file name is not a module name).
_spec = importlib.util.spec_from_file_location("virtual_sessions", os.path.join(BENCH, "scripts", "virtual-sessions.py"))
virtual_sessions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(virtual_sessions)


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
        latencies = virtual_sessions.timed_gets(port, ids)
        percentile = virtual_sessions.percentile
        print(f"{SESSIONS} sessions after {DURATION} s of posts: first GET p50 {percentile(latencies, 0.5):.2f} ms, "
              f"p99 {percentile(latencies, 0.99):.2f} ms, max {max(latencies):.2f} ms")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
