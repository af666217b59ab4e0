#!/usr/bin/env python3
"""Timer lateness (issue 19): LIGHTS running traffic lights (red 4 s, green 3 s, yellow 1 s: three durable timers
every 8 s each, so 26,667 lights make 10,000 timers due a second) on the release feedback-host with the shipped
defaults (journal per-commit, access log on, sessions active: nobody is idle for 15 minutes), for SECONDS.

Lateness is measured two ways in the same run:
- the server's `feedbackhost_timer_lateness_seconds` histogram (each timer, from its deadline to the step that
  replaced it; its buckets bound the p99);
- SAMPLE of the lights watched over SSE by this script: for each phase change, the wall time it arrived here less
  the deadline the previous state held (so it includes the stream's delivery): exact p50, p99, max.

PASSIVE=1 runs the same with `--session-idle-ms 500 --session-wake-rate 20000` (not the defaults: the default
wake rate, 1000 a second, spaces wake-ups on purpose), so lights are passivated between phases and every timer
is a wake-up from the journal's deadline index.

JOURNAL_URL=postgres://... journals to that (empty) PostgreSQL database instead of the SQLite journal in a temporary
data directory. BINARY=PATH runs that build instead of building this tree's.

Usage (from Benchmarks/): scripts/timer-lateness.py   (LIGHTS=26667 SECONDS=32 SAMPLE=200 PASSIVE=0; a whole number of 8 s cycles)
"""
import http.client
import json
import os
import selectors
import shutil
import socket
import subprocess
import tempfile
import threading
import time

LIGHTS = int(os.environ.get("LIGHTS", "26667"))
SECONDS = float(os.environ.get("SECONDS", "32"))
SAMPLE = int(os.environ.get("SAMPLE", "200"))
PASSIVE = os.environ.get("PASSIVE", "0") == "1"
JOURNAL_URL = os.environ.get("JOURNAL_URL", "")
BINARY = os.environ.get("BINARY", "")
BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def create_lights(port, count, ids, lock):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": "application/json"}
    for _ in range(count):
        connection.request("POST", "/v1/sessions", body='{"system":"traffic-light"}', headers=headers)
        response = connection.getresponse()
        body = json.loads(response.read())
        assert response.status == 201, body
        connection.request("POST", f"/v1/sessions/{body['id']}/events", body='{"type":"start"}', headers=headers)
        response = connection.getresponse()
        response.read()
        assert response.status == 200
        with lock:
            ids.append(body["id"])
    connection.close()


def metrics(port):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    connection.close()
    buckets, count = [], 0.0
    for line in text.splitlines():
        if line.startswith("feedbackhost_timer_lateness_seconds_bucket"):
            bound = line.split('le="')[1].split('"')[0]
            buckets.append((float("inf") if bound == "+Inf" else float(bound), float(line.rsplit(" ", 1)[1])))
        elif line.startswith("feedbackhost_timer_lateness_seconds_count"):
            count = float(line.rsplit(" ", 1)[1])
    return buckets, count


class Watcher:
    """SSE streams of the sampled lights, read by one thread: each phase change's arrival less its deadline."""

    def __init__(self, port, ids):
        self.latenesses = []
        self.selector = selectors.DefaultSelector()
        self.stop = False
        for session in ids:
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(f"GET /v1/sessions/{session}/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            sock.setblocking(False)
            self.selector.register(sock, selectors.EVENT_READ, {"buffer": b"", "deadline": None, "phase": None})
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        while not self.stop:
            for key, _ in self.selector.select(timeout=0.2):
                arrived = time.time() * 1000
                data = key.fileobj.recv(65536)
                if not data:
                    self.selector.unregister(key.fileobj)
                    continue
                state = key.data
                state["buffer"] += data
                while b"\n\n" in state["buffer"]:
                    frame, state["buffer"] = state["buffer"].split(b"\n\n", 1)
                    self.frame(frame, state, arrived)

    def frame(self, frame, state, arrived):
        data = [line[6:] for line in frame.split(b"\n") if line.startswith(b"data: ")]
        if not data:
            return
        try:
            message = json.loads(b"\n".join(data))
        except ValueError:
            return
        light = message.get("state") or {}
        phase, deadline = light.get("phase"), light.get("deadline")
        if state["phase"] is not None and phase != state["phase"] and state["deadline"] is not None:
            self.latenesses.append(arrived - state["deadline"])
        state["phase"], state["deadline"] = phase, deadline

    def close(self):
        self.stop = True
        self.thread.join()
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()


def cpu_seconds(pid):
    """The process's user and system CPU time so far, from /proc."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    if not BINARY:
        subprocess.run(["swift", "build", "-c", "release", "--product", "feedback-host"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    work = tempfile.mkdtemp(prefix="timer-lateness-")
    server = None
    watcher = None
    try:
        flags = ["--session-idle-ms", "500", "--session-wake-rate", "20000"] if PASSIVE else []
        server = subprocess.Popen(
            [BINARY or ROOT + "/.build/release/feedback-host", "--port", "0"]
            + (["--journal-url", JOURNAL_URL] if JOURNAL_URL else ["--data-dir", work + "/data"]) + flags,
            stdout=subprocess.PIPE, stderr=open(work + "/server.log", "w"), text=True)
        port = int(server.stdout.readline().strip().rsplit(":", 1)[1])
        ids, lock, threads = [], threading.Lock(), []
        start = time.monotonic()
        for index in range(8):
            share = LIGHTS // 8 + (1 if index < LIGHTS % 8 else 0)
            threads.append(threading.Thread(target=create_lights, args=(port, share, ids, lock)))
            threads[-1].start()
        for thread in threads:
            thread.join()
        print(f"{LIGHTS} lights created and started in {time.monotonic() - start:.1f} s "
              f"({3 * LIGHTS / 8:.0f} timers due a second)")
        watcher = Watcher(port, ids[:SAMPLE])
        time.sleep(8)  # one whole cycle after the last start before measuring
        _, first_count = metrics(port)
        before = metrics(port)[0]
        cpu_before = cpu_seconds(server.pid)
        time.sleep(SECONDS)
        buckets, count = metrics(port)
        cpu = cpu_seconds(server.pid) - cpu_before
        fired = count - first_count
        print(f"timers fired in {SECONDS:.0f} s: {fired:.0f} ({fired / SECONDS:.0f} a second)"
              + ("  [PASSIVE: --session-idle-ms 500 --session-wake-rate 20000]" if PASSIVE else "  [shipped defaults]"))
        print(f"server CPU: {cpu:.1f} s in {SECONDS:.0f} s ({cpu / SECONDS * 100:.0f} % of a core)")
        window = [(bound, total - dict(before).get(bound, 0)) for bound, total in buckets]
        p99_bound = next((bound for bound, total in window if total >= 0.99 * fired), float("inf"))
        p50_bound = next((bound for bound, total in window if total >= 0.5 * fired), float("inf"))
        print(f"server histogram: p50 <= {p50_bound * 1000:g} ms, p99 <= {p99_bound * 1000:g} ms")
        watcher.close()
        measured = watcher.latenesses
        if measured:
            print(f"sampled over SSE ({len(measured)} phase changes of {SAMPLE} lights, deadline to arrival here): "
                  f"p50 {percentile(measured, 0.5):.1f} ms, p99 {percentile(measured, 0.99):.1f} ms, "
                  f"max {max(measured):.1f} ms")
        watcher = None
    finally:
        if watcher is not None:
            watcher.close()
        if server is not None:
            server.terminate()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
