#!/usr/bin/env python3
"""make cluster-test: three feedback-host replicas on loopback behind HAProxy with the shipped configuration.

Creates 200 sessions through HAProxy with `PUT /v1/sessions/{id}` (client-chosen ids), posts events and reads
their streams through HAProxy, then checks on each replica directly (GET /v1/sessions/{id} and /metrics) that
every session lives on exactly one replica and that streams and posts agree. Then stops one replica and checks
that the other replicas' sessions are unaffected and what a client of a lost session sees (its stream ends, 404,
a new PUT recreates it on a surviving replica). Before that, nginx with the shipped nginx.conf routes 60 more
sessions to the same replicas. Binds 127.0.0.1 only; stops every process it starts.
"""

import argparse
import csv
import http.client
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proxy_configs  # noqa: E402
from feedbackhost import Client, EventStream, Replica, metric, new_session_id  # noqa: E402

SESSIONS = 200
REPLICAS = 3
TIME_LIMIT_SECONDS = 120


class Check:
    """A check script's voice: `log` with the seconds since it started, `fail` that ends it, `wait_for` that fails."""

    def __init__(self, name):
        self.name = name
        self.started = time.monotonic()

    def elapsed(self):
        return time.monotonic() - self.started

    def log(self, message):
        print(f"{self.name}: [{self.elapsed():5.1f} s] {message}", flush=True)

    def fail(self, message):
        raise SystemExit(f"{self.name}: FAILED: {message}")

    def wait_for(self, description, predicate, timeout=20):
        wait_for(description, predicate, timeout=timeout, on_timeout=self.fail)


CHECK = Check("cluster-test")
log, fail = CHECK.log, CHECK.fail


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(description, predicate, timeout=20, on_timeout=None):
    """Polls `predicate` until it holds; else `on_timeout` (this test's `fail` by default) with the description."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    (on_timeout or fail)(f"{description}: not within {timeout} s")


class Balancer:
    """A proxy (HAProxy or nginx) in the foreground, in its own process group, logging to a file."""

    def __init__(self, command, log_path, port, stats_port=None):
        self.log = open(log_path, "wb")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.port, self.stats_port = port, stats_port
        self.base_url = f"http://127.0.0.1:{port}"

    def wait_until_listening(self):
        def accepts():
            if self.process.poll() is not None:
                fail(f"{self.process.args[0]} exited with {self.process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                return False

        wait_for(f"{self.process.args[0]} listens", accepts)

    def server_states(self):
        """{server name: status} from the stats page's CSV, or {} while HAProxy is not up yet."""
        if self.process.poll() is not None:
            fail(f"haproxy exited with {self.process.returncode}")
        try:
            text = http_get_text(self.stats_port, "/stats;csv")
        except OSError:
            return {}
        rows = csv.DictReader(io.StringIO(text.lstrip("# ")))
        return {row["svname"]: row["status"] for row in rows
                if row["pxname"] == "replicas" and row["svname"] not in ("FRONTEND", "BACKEND")}

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # workers left behind by the master, if any
        except ProcessLookupError:
            pass
        self.log.close()


def owners(replicas, sessions):
    """{session id: [names of the replicas that answer 200 for it directly]}."""
    found = {session: [] for session in sessions}
    for replica in replicas:
        client = Client(replica.base_url)
        for session in sessions:
            status, _, _ = client.request("GET", f"/v1/sessions/{session}")
            if status == 200:
                found[session].append(replica.name)
            elif status != 404:
                fail(f"GET /v1/sessions/{session} on {replica.name} answered {status}")
        client.close()
    return found


def http_get_text(port, path):
    """One GET on its own connection; the body as text."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path)
        return connection.getresponse().read().decode()
    finally:
        connection.close()


def replica_metrics(replica):
    return http_get_text(replica.port, "/metrics")


def snapshot_of(stream):
    """The next `snapshot` event's data, parsed."""
    while True:
        event = stream.next_event()
        if event is None:
            fail("a stream ended before its snapshot")
        name, _, data = event
        if name == "snapshot":
            return json.loads(data)


def check_nginx(replicas, workdir, count=60):
    """nginx with the shipped nginx.conf in front of the same replicas: its hash on the id routes alike."""
    port = free_port()
    with open(proxy_configs.NGINX) as handle:
        rendered = proxy_configs.render_nginx(handle.read(), port, [r.port for r in replicas], workdir)
    config_path = os.path.join(workdir, "nginx.conf")
    with open(config_path, "w") as handle:
        handle.write(rendered)
    proxy = Balancer(["nginx", "-e", "stderr", "-c", config_path, "-g", "daemon off;"],
                     os.path.join(workdir, "nginx.log"), port)
    try:
        proxy.wait_until_listening()
        front = Client(proxy.base_url)
        sessions = [new_session_id() for _ in range(count)]
        for session in sessions:
            status, _, _ = front.request("PUT", f"/v1/sessions/{session}", {"system": "counter"})
            if status != 201:
                fail(f"PUT through nginx answered {status}")
            stream = EventStream(proxy.base_url, f"/v1/sessions/{session}/stream")
            snapshot_of(stream)
            status, _, posted = front.request("POST", f"/v1/sessions/{session}/events", {"type": "increment"})
            if status != 200:
                fail(f"POST through nginx answered {status}")
            # Unbuffered: the event arrives while the stream stays open.
            shown = snapshot_of(stream)
            if shown["rev"] != posted["rev"] or shown["state"] != posted["state"]:
                fail(f"the stream through nginx showed {shown}, the post answered {posted}")
            stream.close()
        front.close()
        placement = owners(replicas, sessions)
        if any(len(where) != 1 for where in placement.values()):
            fail("a session created through nginx does not live on exactly one replica")
        spread = {r.name: sum(1 for s in sessions if placement[s] == [r.name]) for r in replicas}
        if not all(spread.values()):
            fail(f"nginx does not spread sessions: {spread}")
        log(f"nginx: {count} sessions created with PUT, posted to and streamed through nginx, each on exactly one "
            f"replica ({', '.join(f'{n} {c}' for n, c in spread.items())})")
    finally:
        proxy.stop()


def run(binary, workdir):
    replicas, balancer = [], None
    try:
        for index in range(1, REPLICAS + 1):
            replicas.append(Replica.start([binary, "--host", "127.0.0.1", "--port", "0", "--data-dir", "none"],
                                          name=f"feedback-host-{index}"))
        port, stats_port = free_port(), free_port()
        with open(proxy_configs.HAPROXY) as handle:
            rendered = proxy_configs.render_haproxy(handle.read(), port, stats_port, [r.port for r in replicas])
        config_path = os.path.join(workdir, "haproxy.cfg")
        with open(config_path, "w") as handle:
            handle.write(rendered)
        balancer = Balancer(["haproxy", "-db", "-f", config_path], os.path.join(workdir, "haproxy.log"), port,
                            stats_port)
        names = [r.name for r in replicas]
        wait_for("HAProxy sees every replica UP",
                 lambda: sorted(s for s, v in balancer.server_states().items() if v == "UP") == sorted(names))
        log(f"replicas on ports {[r.port for r in replicas]}, HAProxy on {port}")

        front = Client(balancer.base_url)
        sessions = [new_session_id() for _ in range(SESSIONS)]
        for session in sessions:
            status, headers, body = front.request("PUT", f"/v1/sessions/{session}", {"system": "counter"})
            if status != 201 or body["id"] != session:
                fail(f"PUT /v1/sessions/{session} answered {status}: {body}")
        # A repeated PUT of the same session reaches the same replica: 200, not a second session.
        status, _, _ = front.request("PUT", f"/v1/sessions/{sessions[0]}", {"system": "counter"})
        if status != 200:
            fail(f"a repeated PUT answered {status}, expected 200")
        status, _, _ = front.request("PUT", f"/v1/sessions/{sessions[0]}", {"system": "catch"})
        if status != 409:
            fail(f"a PUT with another system answered {status}, expected 409")
        log(f"{SESSIONS} sessions created through HAProxy with PUT")

        expected = {}
        for number, session in enumerate(sessions, start=1):
            status, _, body = front.request("POST", f"/v1/sessions/{session}/events",
                                            {"type": "add", "amount": number})
            if status != 200 or body["state"] != {"count": number}:
                fail(f"posting to {session} answered {status}: {body}")
            # The stream (through HAProxy, its own connection) starts with the state the post produced; a post
            # while it is open arrives on it.
            stream = EventStream(balancer.base_url, f"/v1/sessions/{session}/stream")
            if stream.status != 200:
                fail(f"GET /v1/sessions/{session}/stream answered {stream.status}")
            first = snapshot_of(stream)
            if first["state"] != {"count": number} or first["rev"] != body["rev"]:
                fail(f"the stream of {session} began with {first}, the post answered {body}")
            status, _, posted = front.request("POST", f"/v1/sessions/{session}/events", {"type": "increment"})
            if status != 200:
                fail(f"posting an increment to {session} answered {status}")
            second = snapshot_of(stream)
            if second["state"] != posted["state"] or second["rev"] != posted["rev"]:
                fail(f"the stream of {session} showed {second}, the post answered {posted}")
            stream.close()
            expected[session] = posted
        log(f"{SESSIONS} sessions: 2 events each posted through HAProxy, each stream showed both")

        placement = owners(replicas, sessions)
        misplaced = {s: where for s, where in placement.items() if len(where) != 1}
        if misplaced:
            fail(f"{len(misplaced)} sessions do not live on exactly one replica: {list(misplaced.items())[:3]}")
        by_replica = {name: [s for s in sessions if placement[s] == [name]] for name in names}
        for replica in replicas:
            owned = by_replica[replica.name]
            text = replica_metrics(replica)
            gauge = metric(text, "feedbackhost_sessions")
            applied = metric(text, "feedbackhost_events_total", {"outcome": "applied"})
            if gauge != len(owned) or applied != 2 * len(owned):
                fail(f"{replica.name} owns {len(owned)} sessions but its metrics say sessions={gauge}, "
                     f"events applied={applied}")
            if not owned:
                fail(f"{replica.name} owns no session: the balancer does not spread sessions")
        for session, posted in expected.items():
            direct = Client(next(r for r in replicas if r.name == placement[session][0]).base_url)
            status, _, body = direct.request("GET", f"/v1/sessions/{session}")
            direct.close()
            if status != 200 or body["rev"] != posted["rev"] or body["state"] != posted["state"]:
                fail(f"{session} on its replica: {status} {body}, the posts answered {posted}")
        log("ownership: " + ", ".join(f"{n} {len(by_replica[n])}" for n in names)
            + f" sessions (sum {sum(len(v) for v in by_replica.values())}); /metrics agree on sessions and events")

        check_nginx(replicas, workdir)

        # One replica goes away. A stream of one of its sessions ends; its sessions are gone; the others are not.
        leaving = replicas[1]
        lost, kept = by_replica[leaving.name], [s for s in sessions if s not in by_replica[leaving.name]]
        watched = EventStream(balancer.base_url, f"/v1/sessions/{lost[0]}/stream")
        snapshot_of(watched)
        code = leaving.stop()
        if code != 0:
            fail(f"{leaving.name} exited with {code} after SIGTERM")
        deadline = time.monotonic() + 15
        while watched.next_event() is not None:
            if time.monotonic() > deadline:
                fail("a stream of the stopped replica did not end")
        watched.close()
        wait_for(f"HAProxy marks {leaving.name} DOWN",
                 lambda: balancer.server_states().get(leaving.name, "").startswith("DOWN"))
        log(f"stopped {leaving.name} (exit 0); its open stream ended; HAProxy marked it DOWN")

        front.close()
        for session in kept:
            status, _, body = front.request("GET", f"/v1/sessions/{session}")
            if status != 200 or body["rev"] != expected[session]["rev"]:
                fail(f"{session}, owned by a surviving replica, answered {status} {body}")
            status, _, body = front.request("POST", f"/v1/sessions/{session}/events", {"type": "increment"})
            if status != 200 or body["state"]["count"] != expected[session]["state"]["count"] + 1:
                fail(f"posting to surviving session {session} answered {status}: {body}")
        survivors = [r for r in replicas if r is not leaving]
        after = owners(survivors, kept)
        moved = [s for s in kept if after[s] != placement[s]]
        if moved:
            fail(f"{len(moved)} sessions of surviving replicas changed owner: {moved[:3]}")
        recreated = owners(survivors, lost)
        for session in lost:
            status, _, _ = front.request("GET", f"/v1/sessions/{session}")
            if status != 404:
                fail(f"a session of the stopped replica answered {status}, expected 404")
            status, _, _ = front.request("PUT", f"/v1/sessions/{session}", {"system": "counter"})
            if status != 201:
                fail(f"recreating {session} answered {status}, expected 201")
        if any(recreated[s] for s in lost):
            fail("a session of the stopped replica was found on a surviving replica before it was recreated")
        recreated = owners(survivors, lost)
        if any(len(recreated[s]) != 1 for s in lost):
            fail("a recreated session does not live on exactly one surviving replica")
        front.close()
        log(f"{len(kept)} sessions of the surviving replicas unchanged and still served by their owners; "
            f"{len(lost)} sessions of {leaving.name}: 404, then PUT recreated each on one surviving replica")
    finally:
        if balancer is not None:
            balancer.stop()
        for replica in replicas:
            replica.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/debug/feedback-host")
    args = parser.parse_args()

    def timed_out(_signal, _frame):
        raise SystemExit(f"cluster-test: FAILED: over {TIME_LIMIT_SECONDS} s")

    signal.signal(signal.SIGALRM, timed_out)
    signal.alarm(TIME_LIMIT_SECONDS)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cluster-test-") as workdir:
        try:
            run(os.path.abspath(args.binary), workdir)
        except SystemExit:
            for name in ("haproxy.log", "nginx.log"):
                log_path = os.path.join(workdir, name)
                if os.path.exists(log_path):
                    with open(log_path, errors="replace") as handle:
                        tail = handle.read().splitlines()[-15:]
                    print(f"{name} (last lines):\n  " + "\n  ".join(tail), file=sys.stderr)
            raise
    log(f"passed in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
