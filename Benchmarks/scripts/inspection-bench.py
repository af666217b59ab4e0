#!/usr/bin/env python3
"""Issue 32: the inspection reads of one long session against the release feedback-host.

Starts the binary with `--history-retention forever` in a fresh data directory, creates one counter session and posts
EVENTS increments to it in batches of 100 over one keep-alive connection, restarts the server (its start-up
compaction indexes the whole log, so the reads meet a caught-up index; `--no-restart` reads at once, behind the
background step), then, over one keep-alive connection, asks `GET /v1/sessions/{id}/states/{rev}` at STATES random
revisions and PAGES history pages of 500 entries at random `after`, and prints the median, p99 and max of each
(client-side wall time per request). Every answer must be 200 with the expected revision. With `--access-log` the
server writes its access log and the script also prints the server's own durations of the same requests (from the
head's arrival to the answer queued), to tell time in the server from time waiting for a core.

Usage: scripts/inspection-bench.py [--binary ../.build/release/feedback-host] [--events 1000000] [--states 300]
                                   [--pages 200] [--port 18096] [--cpu 0] [--no-restart] [--access-log]
"""
import argparse
import http.client
import json
import os
import random
import shutil
import subprocess
import tempfile
import time


def start(binary, port, directory, cpu, access_log=False):
    command = [binary, "--port", str(port), "--data-dir", directory, "--history-retention", "forever",
               "--log-access", "on" if access_log else "off"]
    if cpu is not None:
        command = ["taskset", "-c", str(cpu)] + command
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=open(directory + ".log", "a"))
    for _ in range(600):
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/readyz")
            if connection.getresponse().status == 200:
                connection.close()
                return process
        except OSError:
            pass
        time.sleep(0.1)
    process.kill()
    raise SystemExit("the server did not become ready")


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def request(connection, method, path, body=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    began = time.perf_counter()
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    data = response.read()
    return response.status, data, (time.perf_counter() - began) * 1000


def summary(name, times):
    times = sorted(times)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(f"{name}: {len(times)} requests, median {times[len(times) // 2]:.2f} ms, p99 {p99:.2f} ms, "
          f"max {times[-1]:.2f} ms")


def server_side(log):
    """The server's durations of the reads, from its access log (`duration_us`, by route)."""
    durations = {"/v1/sessions/{id}/states/{rev}": [], "/v1/sessions/{id}/history": []}
    for line in open(log, errors="replace"):
        if "http.access" not in line or "method=GET" not in line:
            continue
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if fields.get("route") in durations and "duration_us" in fields:
            durations[fields["route"]].append(int(fields["duration_us"]) / 1000)
    for route, times in durations.items():
        if times:
            summary(f"server side {route}", times)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(here, "../../.build/release/feedback-host"))
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--states", type=int, default=300)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--port", type=int, default=18096)
    parser.add_argument("--cpu", type=int, default=None)
    parser.add_argument("--no-restart", action="store_true")
    parser.add_argument("--access-log", action="store_true")
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="inspection-bench-")
    directory = os.path.join(work, "data")
    process = start(arguments.binary, arguments.port, directory, arguments.cpu)
    try:
        connection = http.client.HTTPConnection("127.0.0.1", arguments.port, timeout=120)
        status, data, _ = request(connection, "POST", "/v1/sessions", json.dumps({"system": "counter"}))
        assert status == 201, data
        session = json.loads(data)["id"]
        batch = json.dumps({"events": [{"type": "increment"}] * 100})
        began = time.perf_counter()
        for _ in range(arguments.events // 100):
            status, data, _ = request(connection, "POST", f"/v1/sessions/{session}/events", batch)
            assert status == 200, data
        head = json.loads(data)["rev"]
        print(f"posted {head} events in {time.perf_counter() - began:.1f} s")
        connection.close()
        if not arguments.no_restart:
            stop(process)
            began = time.perf_counter()
            process = start(arguments.binary, arguments.port, directory, arguments.cpu, arguments.access_log)
            print(f"restarted (start-up compaction indexed the log) in {time.perf_counter() - began:.1f} s")
        connection = http.client.HTTPConnection("127.0.0.1", arguments.port, timeout=120)
        random.seed(32)
        states = []
        for _ in range(arguments.states):
            revision = random.randint(0, head)
            status, data, elapsed = request(connection, "GET", f"/v1/sessions/{session}/states/{revision}")
            assert status == 200 and json.loads(data)["state"]["count"] == revision, data[:200]
            states.append(elapsed)
        pages = []
        for _ in range(arguments.pages):
            after = random.randint(0, head - 500)
            status, data, elapsed = request(connection, "GET", f"/v1/sessions/{session}/history?after={after}&limit=500")
            entries = json.loads(data)["entries"]
            assert status == 200 and len(entries) == 500 and entries[0]["rev"] == after + 1, data[:200]
            pages.append(elapsed)
        summary(f"GET states/{{rev}} of a {head}-event session", states)
        summary("GET history?limit=500", pages)
        connection.close()
    finally:
        stop(process)
        if arguments.access_log:
            server_side(directory + ".log")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
