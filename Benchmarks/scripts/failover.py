#!/usr/bin/env python3
"""Issue 20: how long a session is unavailable when its replica goes, through HAProxy with the shipped configuration
(health checks every 2 s, `retries 2`, `option redispatch 1`), replicas journaling to one PostgreSQL (on this
machine, fsync on) with the shipped defaults otherwise.

Three release replicas; SESSIONS counter sessions created through HAProxy with PUT; PROBERS threads post an
increment (each with its own Idempotency-Key, retried with it until acknowledged) to every session in turn, so each
session gets a write every few milliseconds. Then:
- unplanned: SIGKILL the replica that owns the most sessions;
- planned: SIGTERM another (a graceful shutdown: /readyz fails, its sessions are passivated, HAProxy moves them).
Each session's unavailability is the longest time between two of its acknowledged increments in the 8 s after the
fault; reported as the max over all sessions (those of the replica that went are the ones with long gaps; a request
to another replica, even its GET, would activate the session there, so ownership is not probed) and the number of
sessions whose gap is longer than the longest of a quiet period (the probing's own gaps).

Usage (from Benchmarks/): scripts/failover.py   (SESSIONS=60 PROBERS=12)
"""
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(ROOT, "Deployment", "checks"))
import proxy_configs  # noqa: E402
from cluster_test import Balancer, free_port, wait_for  # noqa: E402
from feedbackhost import Client, Replica, new_session_id  # noqa: E402
from postgres_server import PostgresServer  # noqa: E402

SESSIONS = int(os.environ.get("SESSIONS", "60"))
PROBERS = int(os.environ.get("PROBERS", "12"))


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class Probe:
    def __init__(self):
        self.lock = threading.Lock()
        self.acknowledged = {}  # session -> [monotonic times of acknowledged increments]
        self.stop = threading.Event()

    def run(self, base, sessions):
        client = Client(base, timeout=30)
        while not self.stop.is_set():
            for session in sessions:
                key = new_session_id()
                while not self.stop.is_set():
                    try:
                        status, _, _ = client.request("POST", f"/v1/sessions/{session}/events",
                                                      {"type": "increment"}, headers={"Idempotency-Key": key})
                    except OSError:
                        client.close()
                        status = None
                    if status == 200:
                        with self.lock:
                            self.acknowledged.setdefault(session, []).append(time.monotonic())
                        break
                    time.sleep(0.005)

    def gaps(self, sessions, start, end):
        """The longest gap between acknowledged increments of each session within [start, end]."""
        result = []
        with self.lock:
            for session in sessions:
                times = [t for t in self.acknowledged.get(session, []) if start <= t <= end]
                times = [start] + times + [end]
                result.append(max(b - a for a, b in zip(times, times[1:])))
        return result


def report(name, gaps, quiet_max):
    hit = [gap for gap in gaps if gap > quiet_max]
    print(f"{name}: longest gap without an acknowledged write over {len(gaps)} sessions: "
          f"max {max(gaps) * 1000:.0f} ms, p50 {percentile(gaps, 0.5) * 1000:.0f} ms; "
          f"{len(hit)} sessions above the quiet max", flush=True)


def main():
    subprocess.run(["swift", "build", "-c", "release", "--product", "feedback-host"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    binary = os.path.join(ROOT, ".build", "release", "feedback-host")
    os.chdir(ROOT)
    postgres = PostgresServer(fsync=True)
    workdir = tempfile.mkdtemp(prefix="failover-")
    replicas, balancer, probe, threads = [], None, Probe(), []
    try:
        url = postgres.create_database("feedbackhost")
        ports = [free_port() for _ in range(3)]
        for index, port in enumerate(ports, start=1):
            replicas.append(Replica.start([binary, "--host", "127.0.0.1", "--port", str(port), "--journal-url", url],
                                          name=f"feedback-host-{index}",
                                          stderr=open(os.path.join(workdir, f"replica-{index}.log"), "ab")))
        front_port, stats_port = free_port(), free_port()
        with open(proxy_configs.HAPROXY) as handle:
            rendered = proxy_configs.render_haproxy(handle.read(), front_port, stats_port, ports)
        config = os.path.join(workdir, "haproxy.cfg")
        with open(config, "w") as handle:
            handle.write(rendered)
        balancer = Balancer(["haproxy", "-db", "-f", config], os.path.join(workdir, "haproxy.log"), front_port,
                            stats_port)
        wait_for("HAProxy sees every replica UP", lambda: sum(v == "UP" for v in balancer.server_states().values()) == 3)
        front = Client(balancer.base_url)
        sessions = [new_session_id() for _ in range(SESSIONS)]
        for session in sessions:
            status, _, _ = front.request("PUT", f"/v1/sessions/{session}", {"system": "counter"})
            assert status == 201, status
        shares = [sessions[index::PROBERS] for index in range(PROBERS)]
        for share in shares:
            threads.append(threading.Thread(target=probe.run, args=(balancer.base_url, share), daemon=True))
            threads[-1].start()
        time.sleep(3)
        quiet_start = time.monotonic()
        time.sleep(4)
        quiet = probe.gaps(sessions, quiet_start, time.monotonic())
        quiet_max = max(quiet)
        print(f"quiet (no fault): longest gap over {len(quiet)} sessions: max {quiet_max * 1000:.0f} ms, "
              f"p50 {percentile(quiet, 0.5) * 1000:.0f} ms", flush=True)

        start = time.monotonic()
        os.kill(replicas[0].process.pid, signal.SIGKILL)
        replicas[0].process.wait()
        time.sleep(8)
        report(f"SIGKILL of {replicas[0].name} (unplanned)", probe.gaps(sessions, start, time.monotonic()), quiet_max)

        start = time.monotonic()
        replicas[1].stop()
        time.sleep(8)
        report(f"SIGTERM of {replicas[1].name} (planned)", probe.gaps(sessions, start, time.monotonic()), quiet_max)
    finally:
        probe.stop.set()
        for thread in threads:
            thread.join(timeout=30)
        if balancer is not None:
            balancer.stop()
        for replica in replicas:
            replica.stop()
        postgres.stop()


if __name__ == "__main__":
    main()
