#!/usr/bin/env python3
"""Sessions outlive their replica (issue 20): a private PostgreSQL, replicas with `--journal-url`, HAProxy with the
shipped configuration (one more `server` line for the replica that joins), and a week's faults while clients work.

300 counter sessions, half created with `POST /v1/sessions` through HAProxy (the replica that receives it creates
and journals it; the ring's owner activates it on its first request), half with `PUT`. Posters run throughout: every
increment carries its own `Idempotency-Key` and is retried with the same key until it is acknowledged. 30 patch
streams stay open through HAProxy, reconnecting with `Last-Event-ID` whenever one ends. While posting goes on: SIGKILL one
replica; start a fourth, which HAProxy adds to the ring when its health check passes; SIGTERM another; SIGSTOP one
for longer than its lease, then SIGCONT it. Then, after the faults settled: every session answers 200 through
HAProxy, its count equals its acknowledged increments (nothing lost, nothing applied twice) and its revision equals
its count (none started again from its initial state); no request was ever answered 404; no stream saw its revision
go backwards or a patch from another base than the revision it was at (a resumed stream continues from its cursor);
every stream reached its session's final revision within 5 s of the last post (issue 33: a replica that lost a
session ends its streams with `event: moved`, so none stays open and silent where the session left); and `feedback-host verify --journal-url` finds every session's journaled history reproduced by this
build. Binds 127.0.0.1 only; stops every process it starts, by its process id.

Usage: python3 Deployment/checks/cluster_fault_test.py --binary .build/debug/feedback-host
"""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proxy_configs  # noqa: E402
from cluster_test import Balancer, Check, free_port  # noqa: E402
from feedbackhost import Client, EventStream, Replica, new_session_id  # noqa: E402
from postgres_server import PostgresServer  # noqa: E402

SESSIONS = 300
STREAMS = 30
POSTERS = 6
LEASE_MS = 5000  # the shipped journal.lease.ms
CHECK = Check("cluster-fault-test")
log, fail, wait_for = CHECK.log, CHECK.fail, CHECK.wait_for


class Ledger:
    """What the clients saw: acknowledged increments per session, every status, and the streams' revisions."""

    def __init__(self):
        self.lock = threading.Lock()
        self.acknowledged = {}
        self.statuses = {}
        self.not_found = []
        self.backwards = []
        self.stream_events = 0
        self.reconnects = 0
        self.moved = 0
        self.gaps = []
        self.wrong_counts = []
        # Per watched session: the revision its stream is at, and when (time.monotonic()) it got there.
        self.stream_revs = {}
        self.last_acknowledged = None  # time.monotonic() of the last acknowledged increment
        self.resume_delays = []  # seconds from each `event: moved` to the stream's next state, after reconnecting

    def status(self, code, what):
        with self.lock:
            self.statuses[code] = self.statuses.get(code, 0) + 1
            if code == 404:
                self.not_found.append(what)


def poster(base_url, sessions, ledger, stop, seed):
    """Increments random sessions until `stop`; each increment is retried with its key until acknowledged."""
    rng = random.Random(seed)
    client = Client(base_url, timeout=10)
    while not stop.is_set():
        session = rng.choice(sessions)
        key = new_session_id()
        while True:
            try:
                status, _, body = client.request("POST", f"/v1/sessions/{session}/events", {"type": "increment"},
                                                 headers={"Idempotency-Key": key})
            except OSError:
                client.close()
                status, body = None, None
            if status is not None:
                ledger.status(status, f"POST {session}")
            if status == 200:
                with ledger.lock:
                    ledger.acknowledged[session] = ledger.acknowledged.get(session, 0) + 1
                    ledger.last_acknowledged = time.monotonic()
                break
            if status is not None and 400 <= status < 500 and status not in (408, 429):
                fail(f"POST {session} answered {status}: {body}")
            time.sleep(0.05)  # a 5xx (the session moving, a replica going away) or no answer: the same key again
    client.close()


def apply_patch(state, ops):
    """The counter's patches: add, replace or remove of top-level members; None for anything else."""
    state = dict(state)
    for op in ops:
        path = op.get("path", "")
        if path.count("/") != 1 or op.get("op") not in ("add", "replace", "remove"):
            return None
        if op["op"] == "remove":
            state.pop(path[1:], None)
        else:
            state[path[1:]] = op.get("value")
    return state


def watcher(base_url, session, ledger, stop):
    """One patch stream through HAProxy, reconnected with Last-Event-ID when it ends; revisions must never go back, a
    patch must start where the stream is, and the state it builds must be the counter at that revision."""
    last_id, last_rev, state, moved_at = None, -1, None, None
    while not stop.is_set():
        try:
            resume = {"Last-Event-ID": last_id} if last_id is not None else None
            stream = EventStream(base_url, f"/v1/sessions/{session}/stream?mode=patch", timeout=10, headers=resume)
            ledger.status(stream.status, f"stream {session}")
            if stream.status != 200:
                stream.close()
                time.sleep(0.2)
                continue
            while not stop.is_set():
                event = stream.next_event()
                if event is None:
                    break
                name, event_id, data = event
                if name == "moved":
                    moved_at = time.monotonic()
                    with ledger.lock:
                        ledger.moved += 1
                    continue
                if name not in ("snapshot", "patch"):
                    continue
                body = json.loads(data)
                rev = body["rev"]
                if name == "snapshot":
                    state = body["state"]
                elif body["base"] != last_rev or state is None:
                    with ledger.lock:
                        ledger.gaps.append((session, last_rev, body["base"], rev))
                    state = None
                else:
                    state = apply_patch(state, body["ops"])
                with ledger.lock:
                    if moved_at is not None:
                        ledger.resume_delays.append(time.monotonic() - moved_at)
                        moved_at = None
                    ledger.stream_events += 1
                    if rev < last_rev:
                        ledger.backwards.append((session, last_rev, rev))
                    if state is not None and state.get("count") != rev:
                        ledger.wrong_counts.append((session, rev, state))
                    if ledger.stream_revs.get(session, (None,))[0] != rev:
                        ledger.stream_revs[session] = (rev, time.monotonic())
                last_rev, last_id = rev, event_id or last_id
            stream.close()
        except OSError:
            pass
        with ledger.lock:
            ledger.reconnects += 1
        time.sleep(0.2)


def run(binary, workdir):
    postgres = PostgresServer()
    replicas, balancer, threads, stop = {}, None, [], threading.Event()
    stop_posting = threading.Event()
    try:
        url = postgres.create_database("feedbackhost")
        log(f"PostgreSQL on port {postgres.port}")
        ports = [free_port() for _ in range(4)]

        def start(index):
            replica = Replica.start(
                [binary, "--host", "127.0.0.1", "--port", str(ports[index - 1]), "--journal-url", url],
                name=f"feedback-host-{index}", stderr=open(os.path.join(workdir, f"replica-{index}.log"), "ab"))
            replicas[index] = replica
            return replica

        for index in (1, 2, 3):
            start(index)
        front_port, stats_port = free_port(), free_port()
        with open(proxy_configs.HAPROXY) as handle:
            shipped = handle.read()
        # The shipped file with one more server: the replica that joins the ring later (a scale-up).
        grown = shipped.replace("    server feedback-host-3 feedback-host-3:8080\n",
                                "    server feedback-host-3 feedback-host-3:8080\n"
                                "    server feedback-host-4 feedback-host-4:8080\n")
        if grown == shipped:
            fail("the shipped haproxy.cfg no longer lists feedback-host-3 as expected")
        config = os.path.join(workdir, "haproxy.cfg")
        with open(config, "w") as handle:
            handle.write(proxy_configs.render_haproxy(grown, front_port, stats_port, ports))
        balancer = Balancer(["haproxy", "-db", "-f", config], os.path.join(workdir, "haproxy.log"), front_port,
                            stats_port)

        def up():
            return sorted(name for name, state in balancer.server_states().items() if state == "UP")

        wait_for("HAProxy sees the three replicas UP", lambda: up() == [f"feedback-host-{i}" for i in (1, 2, 3)])
        base = balancer.base_url

        front = Client(base)
        sessions = []
        for number in range(SESSIONS):
            if number % 2 == 0:
                status, _, body = front.request("POST", "/v1/sessions", {"system": "counter"})
                if status != 201:
                    fail(f"POST /v1/sessions answered {status}: {body}")
                sessions.append(body["id"])
            else:
                session = new_session_id()
                status, _, body = front.request("PUT", f"/v1/sessions/{session}", {"system": "counter"})
                if status != 201:
                    fail(f"PUT /v1/sessions/{session} answered {status}: {body}")
                sessions.append(session)
        for session in sessions:  # the first request of each: on the ring's owner, whoever created it
            status, _, body = front.request("GET", f"/v1/sessions/{session}")
            if status != 200 or body["state"] != {"count": 0}:
                fail(f"GET {session} after creation answered {status}: {body}")
        front.close()
        log(f"{SESSIONS} sessions created through HAProxy ({SESSIONS // 2} with POST, {SESSIONS // 2} with PUT), "
            "each answered by the ring's owner")

        ledger = Ledger()
        posters = [threading.Thread(target=poster, args=(base, sessions, ledger, stop_posting, index), daemon=True)
                   for index in range(POSTERS)]
        watchers = [threading.Thread(target=watcher, args=(base, session, ledger, stop), daemon=True)
                    for session in sessions[:STREAMS]]
        threads = posters + watchers
        for thread in threads:
            thread.start()
        time.sleep(3)
        log(f"posting: {sum(ledger.acknowledged.values())} increments acknowledged so far")

        replicas[1].process.send_signal(signal.SIGKILL)
        replicas[1].process.wait(timeout=10)
        log("SIGKILL feedback-host-1")
        time.sleep(3)
        start(4)
        wait_for("HAProxy adds feedback-host-4 to the ring", lambda: "feedback-host-4" in up(), timeout=30)
        log("feedback-host-4 started and UP in HAProxy (the ring grew)")
        time.sleep(3)
        code = replicas[2].stop()
        log(f"SIGTERM feedback-host-2 (exit {code})")
        time.sleep(3)
        paused = replicas[3]
        os.kill(paused.process.pid, signal.SIGSTOP)
        log("SIGSTOP feedback-host-3")
        time.sleep(LEASE_MS / 1000 + 3)
        os.kill(paused.process.pid, signal.SIGCONT)
        log(f"SIGCONT feedback-host-3 after {LEASE_MS / 1000 + 3:.0f} s (past its {LEASE_MS / 1000:.0f} s lease)")
        wait_for("HAProxy sees feedback-host-3 and feedback-host-4 UP",
                 lambda: up() == ["feedback-host-3", "feedback-host-4"], timeout=30)
        time.sleep(3)
        log(f"faults settled; {sum(ledger.acknowledged.values())} increments acknowledged so far")
        not_found_before = len(ledger.not_found)
        time.sleep(2)
        stop_posting.set()
        for thread in posters:
            thread.join(timeout=30)
        if any(thread.is_alive() for thread in posters):
            fail("a poster did not stop within 30 s")
        last_post = ledger.last_acknowledged
        log(f"posters stopped {time.monotonic() - last_post:.1f} s after the last acknowledged increment")
        # Every stream reaches its session's final revision within 5 s of the last post: one whose session moved away
        # from its replica was ended there with `event: moved` and resumed at the owner by its cursor.
        front = Client(base)
        final = {}
        for session in sessions[:STREAMS]:
            status, _, body = front.request("GET", f"/v1/sessions/{session}")
            if status != 200:
                fail(f"GET {session} after the posts answered {status}: {body}")
            final[session] = body["rev"]
        front.close()

        def behind():
            with ledger.lock:
                return [s for s in final if ledger.stream_revs.get(s, (-1, 0))[0] != final[s]]

        while behind() and time.monotonic() < last_post + 5:
            time.sleep(0.05)
        late = behind()
        with ledger.lock:
            reached = {s: max(0.0, ledger.stream_revs[s][1] - last_post) for s in final if s not in late}
            stale = {s: (ledger.stream_revs.get(s, (None,))[0], final[s]) for s in late}
        stop.set()
        for thread in watchers:
            thread.join(timeout=30)
        if any(thread.is_alive() for thread in watchers):
            fail("a stream did not stop within 30 s")
        if late:
            fail(f"{len(late)} of {STREAMS} streams did not reach their session's final revision within 5 s of the last "
                 f"post (stream at, final): {list(stale.items())[:5]}")
        log(f"every stream reached its session's final revision within 5 s of the last post: the last after "
            f"{max(reached.values()):.2f} s (median {sorted(reached.values())[len(reached) // 2]:.2f} s); streams "
            f"ended with event: moved {ledger.moved} times, each resumed with a state after at most "
            f"{max(ledger.resume_delays, default=0):.2f} s (median "
            f"{sorted(ledger.resume_delays)[len(ledger.resume_delays) // 2] if ledger.resume_delays else 0:.2f} s)")

        front = Client(base)
        wrong = []
        for session in sessions:
            status, _, body = front.request("GET", f"/v1/sessions/{session}")
            if status != 200:
                wrong.append(f"{session}: {status}")
                continue
            count, rev = body["state"]["count"], body["rev"]
            expected = ledger.acknowledged.get(session, 0)
            if count != expected or rev != count:
                wrong.append(f"{session}: count {count}, rev {rev}, acknowledged {expected}")
        front.close()
        total = sum(ledger.acknowledged.values())
        log(f"{total} increments acknowledged; statuses seen {dict(sorted(ledger.statuses.items(), key=str))}; "
            f"{ledger.stream_events} stream events, {ledger.reconnects} stream reconnects")
        if wrong:
            fail(f"{len(wrong)} sessions differ from what was acknowledged: {wrong[:5]}")
        if ledger.not_found:
            fail(f"{len(ledger.not_found)} requests answered 404 ({not_found_before} before the faults settled): "
                 f"{ledger.not_found[:5]}")
        if ledger.backwards:
            fail(f"streams saw revisions go backwards: {ledger.backwards[:5]}")
        if ledger.gaps:
            fail(f"streams got patches from another base than their revision (session, at, base, rev): {ledger.gaps[:5]}")
        if ledger.wrong_counts:
            fail(f"streams built states other than the counter at their revision: {ledger.wrong_counts[:5]}")
        log("every session answers 200 with exactly its acknowledged increments; no 404; no stream went back or "
            "skipped a revision")
        # What the replicas journaled through all that is what this build computes from the events, session by
        # session (feedback-host verify on the shared journal, while the replicas run).
        verified = subprocess.run([binary, "verify", "--journal-url", url], capture_output=True, text=True,
                                  timeout=120)
        summary = verified.stdout.strip().splitlines()[-2:] if verified.stdout else []
        if verified.returncode != 0 or f"total: {SESSIONS} sessions" not in verified.stdout \
                or f"{SESSIONS} identical" not in verified.stdout:
            fail(f"feedback-host verify --journal-url exited {verified.returncode}: {verified.stdout} {verified.stderr}")
        log(f"feedback-host verify on the shared journal: {' / '.join(summary)}")
    finally:
        stop.set()
        if balancer is not None:
            balancer.stop()
        for replica in replicas.values():
            if replica.process.poll() is None:
                os.kill(replica.process.pid, signal.SIGCONT)
            replica.stop()
        postgres.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    arguments = parser.parse_args()
    os.chdir(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    with tempfile.TemporaryDirectory(prefix="cluster-fault-") as workdir:
        run(os.path.abspath(arguments.binary), workdir)
    log(f"passed in {CHECK.elapsed():.1f} s")


if __name__ == "__main__":
    main()
