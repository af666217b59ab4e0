"""A misbehaving system harms only its own sessions (issue 31), against a real host process.

`hostile-host` (Tests/HostileHost) is a host of one's own built as docs/SYSTEMS.md shows: the counter beside a
runaway feedback, a reducer that sleeps 2 s on a nap, an event storm and a reducer that traps on a boom. While those
misbehave, 60 counter sessions are posted to over 8 keep-alive connections and 12 of them are streamed: their p99 must
stay under 50 ms and nothing acknowledged may be lost. Then a boom kills the process; after a restart the poisoned
session is quarantined (409), the others answer, and the process does not trap again; release and delete work.
With two replicas on a private PostgreSQL, the quarantine that the restarted replica records holds on the other too.

    HOSTILE_BINARY=.build/debug/hostile-host python3 -m pytest -q -p no:cacheprovider Tests/Containment
"""

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Deployment" / "checks"))
from postgres_server import PostgresServer  # noqa: E402

BINARY = os.environ.get(
    "HOSTILE_BINARY", str(Path(__file__).resolve().parents[2] / ".build" / "debug" / "hostile-host")
)
HEALTHY_SESSIONS = 60
CONNECTIONS = 8
STREAMED = 12
LOAD_SECONDS = 25


class Host:
    """One hostile-host process on a free loopback port over `data_dir`; stopped by its pid."""

    def __init__(self, data_dir, extra=()):
        self.process = subprocess.Popen(
            [BINARY, "--host", "127.0.0.1", "--port", "0", "--data-dir", data_dir, *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        line = self.process.stdout.readline()
        assert "listening on" in line, line + self.process.stderr.read()
        self.port = int(line.rsplit(":", 1)[-1].split()[-1])
        self.errors = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.process.stderr:
            self.errors.append(line)

    def call(self, method, path, body=None, timeout=10):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body)
            connection.request(method, path, body=data, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            raw = response.read()
            return response.status, (json.loads(raw) if raw else None)
        finally:
            connection.close()

    def create(self, system):
        status, body = self.call("POST", "/v1/sessions", {"system": system})
        assert status == 201, body
        return body["id"]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def data_dir():
    directory = tempfile.mkdtemp(prefix="containment-")
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def poster(port, sessions, seconds, latencies, acknowledged, failures):
    """Posts increments round-robin over one keep-alive connection; records each answered post's latency."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = json.dumps({"type": "increment"})
    deadline = time.monotonic() + seconds
    index = 0
    while time.monotonic() < deadline:
        session = sessions[index % len(sessions)]
        index += 1
        start = time.monotonic()
        try:
            connection.request("POST", f"/v1/sessions/{session}/events", body=body,
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
        except (OSError, http.client.HTTPException) as error:
            failures.append(f"{session}: {error!r}")
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            continue
        latencies.append(time.monotonic() - start)
        if response.status == 200:
            acknowledged[session] = acknowledged.get(session, 0) + 1
        else:
            failures.append(f"{session}: {response.status}")
    connection.close()


def stream_reader(port, session, last_counts, stop):
    """Reads the session's SSE stream on a raw socket; keeps the last count it showed."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(f"GET /v1/sessions/{session}/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"
                     .encode())
        sock.settimeout(1)
        buffer = b""
        while not stop.is_set():
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                text = line.decode(errors="replace")
                if '"count"' in text and text.startswith("data:"):
                    try:
                        payload = json.loads(text[5:])
                    except ValueError:
                        continue
                    state = payload.get("state", payload)
                    if isinstance(state, dict) and "count" in state:
                        last_counts[session] = state["count"]


def test_a_misbehaving_system_harms_only_its_own_sessions(data_dir):
    host = Host(data_dir)
    try:
        healthy = [host.create("counter") for _ in range(HEALTHY_SESSIONS)]
        # The hostile sessions: the runaway starts at once, the storm when started, the sleepy on its naps.
        runaway = host.create("runaway")
        storm = host.create("storm")
        sleepy = host.create("sleepy")
        assert host.call("POST", f"/v1/sessions/{storm}/events", {"type": "start"})[0] == 200

        stop_streams = threading.Event()
        last_counts = {}
        readers = [threading.Thread(target=stream_reader, args=(host.port, session, last_counts, stop_streams),
                                    daemon=True) for session in healthy[:STREAMED]]
        for reader in readers:
            reader.start()

        latencies, acknowledged, failures = [], {}, []
        groups = [healthy[i::CONNECTIONS] for i in range(CONNECTIONS)]
        posters = [threading.Thread(target=poster, args=(host.port, group, LOAD_SECONDS, latencies, acknowledged,
                                                         failures)) for group in groups]
        for thread in posters:
            thread.start()
        # Three naps of two seconds each, one after another, while the load runs.
        naps = []
        for _ in range(3):
            start = time.monotonic()
            status, _ = host.call("POST", f"/v1/sessions/{sleepy}/events", {"type": "nap"}, timeout=30)
            naps.append((status, time.monotonic() - start))
        for thread in posters:
            thread.join()

        assert not failures, failures[:5]
        assert all(status == 200 for status, _ in naps), naps
        latencies.sort()
        p99 = latencies[int(len(latencies) * 0.99)]
        print(f"healthy posts: {len(latencies)}, p50 {latencies[len(latencies) // 2] * 1000:.1f} ms, "
              f"p99 {p99 * 1000:.1f} ms, max {latencies[-1] * 1000:.1f} ms; naps {naps}")
        assert p99 < 0.050, f"p99 of the healthy sessions' posts is {p99 * 1000:.1f} ms"

        # Nothing of theirs is lost: each count is what was acknowledged, and the streams showed it.
        for session in healthy:
            status, body = host.call("GET", f"/v1/sessions/{session}")
            assert status == 200
            assert body["state"]["count"] == acknowledged.get(session, 0), session
        time.sleep(1)
        stop_streams.set()
        for session in healthy[:STREAMED]:
            assert last_counts.get(session) == acknowledged.get(session, 0), session

        # The runaway and the storm were stopped, each naming its feedback; the sleepy one moved off the shards.
        for session, feedback in [(runaway, "tick-on-every-state"), (storm, "storm")]:
            status, report = host.call("GET", f"/v1/sessions/{session}/containment")
            assert status == 200, report
            assert report["feedbacks"] == "stopped", report
            assert report["loudestFeedback"] == feedback, report
        status, report = host.call("GET", f"/v1/sessions/{sleepy}/containment")
        assert status == 200 and report["offloaded"] and report["slowReduces"] >= 2, report
        # Stopped feedbacks do not stop clients; an admin resumes them.
        status, body = host.call("POST", f"/v1/sessions/{runaway}/events", {"type": "increment"})
        assert status == 200 and body["state"]["count"] == 1, body
        status, report = host.call("POST", f"/v1/sessions/{runaway}/resume")
        assert status == 200 and report["feedbacks"] == "running", report
        status, _ = host.call("POST", f"/v1/sessions/{storm}/resume")
        assert status == 200

        # A trap kills the process; nothing acknowledged is lost.
        counts = {session: acknowledged.get(session, 0) for session in healthy}
        poisoned = [host.create("trap"), host.create("trap"), host.create("trap")]
        for session in poisoned:
            assert host.call("POST", f"/v1/sessions/{session}/events", {"type": "increment"})[0] == 200
        host = crash_and_restart(host, data_dir, poisoned[0])
        check_quarantined_and_others_answer(host, poisoned[0], counts)
        # Released, the session comes back as it was before the trap.
        status, body = host.call("POST", f"/v1/sessions/{poisoned[0]}/release")
        assert status == 200, body
        status, body = host.call("GET", f"/v1/sessions/{poisoned[0]}")
        assert status == 200 and body["state"]["count"] == 1, body

        host = crash_and_restart(host, data_dir, poisoned[1])
        check_quarantined_and_others_answer(host, poisoned[1], counts)
        # Deleted, it is gone.
        assert host.call("DELETE", f"/v1/sessions/{poisoned[1]}")[0] == 204
        assert host.call("GET", f"/v1/sessions/{poisoned[1]}")[0] == 404
        assert host.process.poll() is None

        # An effect that traps after a suspension (its asynchronous part, on no server thread): the session is
        # quarantined all the same, so its activation does not start the effect again.
        host = crash_and_restart(host, data_dir, poisoned[2], event="fuse")
        check_quarantined_and_others_answer(host, poisoned[2], counts, ran="an effect, after a suspension")
        assert host.call("DELETE", f"/v1/sessions/{poisoned[2]}")[0] == 204
        assert host.process.poll() is None
    finally:
        host.stop()


def test_a_quarantine_holds_on_every_replica(data_dir):
    """Two replicas on one PostgreSQL: the one that trapped records the quarantine when it starts again (its crash
    marks are its own), and the other, asked for the session, refuses it too; released there, it serves it."""
    postgres = PostgresServer()
    replicas = []
    try:
        url = postgres.create_database("containment")
        extra = ("--journal-url", url)
        first_dir, second_dir = os.path.join(data_dir, "first"), os.path.join(data_dir, "second")
        os.makedirs(first_dir)
        os.makedirs(second_dir)
        first = Host(first_dir, extra)
        second = Host(second_dir, extra)
        replicas = [first, second]
        poisoned = first.create("trap")
        assert first.call("POST", f"/v1/sessions/{poisoned}/events", {"type": "increment"})[0] == 200
        first = crash_and_restart(first, first_dir, poisoned, extra=extra)
        replicas[0] = first
        for replica in (second, first):
            status, problem = replica.call("GET", f"/v1/sessions/{poisoned}")
            assert status == 409 and problem["type"].endswith("session-quarantined"), problem
        status, body = second.call("POST", f"/v1/sessions/{poisoned}/release")
        assert status == 200, body
        status, body = second.call("GET", f"/v1/sessions/{poisoned}")
        assert status == 200 and body["state"]["count"] == 1, body
        assert first.process.poll() is None and second.process.poll() is None
    finally:
        for replica in replicas:
            replica.stop()
        postgres.stop()


def crash_and_restart(host, data_dir, session, event="boom", extra=()):
    """Posts the event that traps; the process dies by a signal; a new one starts over the same data directory."""
    try:
        host.call("POST", f"/v1/sessions/{session}/events", {"type": event}, timeout=30)
    except (OSError, http.client.HTTPException):
        pass
    host.process.wait(timeout=30)
    assert host.process.returncode < 0, f"the host exited with {host.process.returncode}, not by a signal"
    return Host(data_dir, extra)


def check_quarantined_and_others_answer(host, poisoned, counts, ran="reduce"):
    for _ in range(2):
        status, problem = host.call("GET", f"/v1/sessions/{poisoned}")
        assert status == 409, problem
        assert problem["type"].endswith("session-quarantined"), problem
        assert ran in problem["detail"], problem
        status, problem = host.call("POST", f"/v1/sessions/{poisoned}/events", {"type": "increment"})
        assert status == 409, problem
    for session, count in list(counts.items())[:10]:
        status, body = host.call("GET", f"/v1/sessions/{session}")
        assert status == 200 and body["state"]["count"] == count, (session, body)
    assert host.call("GET", "/healthz")[0] == 200
    assert host.process.poll() is None, "the host trapped again"
