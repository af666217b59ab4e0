#!/usr/bin/env python3
"""The Kubernetes balancer against a real DNS server (issue 20, item 6): HAProxy with the haproxy.cfg of
Deployment/kubernetes/haproxy.yaml's ConfigMap finds the replicas through the SRV records that kube-dns serves for the
headless Service's named port (`server-template ... _http._tcp.feedback-host.feedbackhost.svc.cluster.local`), with a
DNS server of our own (service_dns.py, dnslib) in kube-dns's place, on 127.0.0.1 and a free port.

A private PostgreSQL, three replicas with `--journal-url` on 127.0.0.1 and free ports (each an SRV record: a target
name and its port, the target's address in the answer's additional section as CoreDNS gives it), and HAProxy with the
ConfigMap's configuration, changed only where a run on loopback must differ (the resolvers' `parse-resolv-conf`
becomes `nameserver t 127.0.0.1:PORT`, the binds listen on free ports, the HTTPS bind uses a self-signed certificate):
the check asserts that these four lines are all that differ. HAProxy's state is read through its master CLI
(`-W -S`, `show servers state`), its stats page and its log; nothing is added to the configuration.

It proves: three server slots fill from DNS, each with its replica's port, and turn UP; the other slots stay in
maintenance. 60 counter sessions created through HAProxy (30 by POST, 30 by PUT) are spread over the three, and
posters increment them throughout (a failed post is retried with its Idempotency-Key). One replica leaves the DNS
answer and stops (SIGTERM): its slot goes DOWN by its health check, its sessions are served by the others with
their state (taken over from PostgreSQL), and the slot empties (maintenance) once `hold obsolete` has passed. A
fourth replica enters the answer without an additional record, so HAProxy must resolve its target itself (an A
query): it takes a free slot and serves sessions. At the end every session answers through HAProxy with exactly its
acknowledged increments, and no request was answered 404. Binds 127.0.0.1 only; stops every process it starts by
its process id.

Usage: python3 Deployment/checks/kubernetes_dns_test.py --binary .build/debug/feedback-host
"""

import argparse
import collections
import os
import re
import signal
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proxy_configs  # noqa: E402
from cluster_fault_test import Ledger, poster  # noqa: E402
from cluster_test import Balancer, Check, free_port  # noqa: E402
from feedbackhost import Client, Replica, new_session_id  # noqa: E402
from postgres_server import PostgresServer  # noqa: E402
from service_dns import ServiceDNS  # noqa: E402
from test_deployment import kubernetes_objects  # noqa: E402

SESSIONS = 60
POSTERS = 2
TIME_LIMIT_SECONDS = 150
CHECK = Check("kubernetes-dns-test")
log, fail, wait_for = CHECK.log, CHECK.fail, CHECK.wait_for


def kubernetes_balancer():
    """The ConfigMap's haproxy.cfg, the SRV name its server-template asks for, the headless Service's DNS name and
    the name of its port, read from the manifests; the SRV name must be the one Kubernetes serves for that port."""
    objects = kubernetes_objects()
    config = objects[("ConfigMap", "feedback-host-haproxy")]["data"]["haproxy.cfg"]
    service = objects[("Service", "feedback-host")]
    if service["spec"].get("clusterIP") != "None":
        fail("the Service feedback-host is not headless")
    port = service["spec"]["ports"][0]
    service_name = f"{service['metadata']['name']}.{service['metadata']['namespace']}.svc.cluster.local"
    srv_name = f"_{port['name']}._{port.get('protocol', 'TCP').lower()}.{service_name}"
    template = re.search(r"(?m)^\s*server-template \S+ \d+-\d+ (\S+)", config)
    if template is None or template.group(1) != srv_name:
        fail(f"the ConfigMap's server-template does not ask for {srv_name}: "
             f"{template.group(0).strip() if template else 'none'}")
    return config, service_name, port["name"]


def haproxy_cli(socket_path, command):
    """One command through HAProxy's master CLI (`@1 ...` goes to the worker); the answer as text."""
    with socket.socket(socket.AF_UNIX) as connection:
        connection.settimeout(10)
        connection.connect(socket_path)
        connection.sendall(command.encode() + b"\n")
        connection.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer.decode()


class Slots:
    """The backend's server slots as HAProxy holds them: status from the stats page, the name and port each slot took
    from its SRV record from `show servers state`."""

    def __init__(self, balancer, cli_socket):
        self.balancer, self.cli_socket = balancer, cli_socket

    def read(self):
        """{slot: (status, target name or None, port)}."""
        statuses = self.balancer.server_states()
        try:
            text = haproxy_cli(self.cli_socket, "@1 show servers state replicas")
        except OSError:
            return {}  # HAProxy is not up yet
        header = next((line.split()[1:] for line in text.splitlines() if line.startswith("# be_id ")), None)
        if header is None:
            return {}
        lines = [line.split() for line in text.splitlines() if line and not line.startswith("#")]
        slots = {}
        for fields in lines:
            if len(fields) < len(header):
                continue
            row = dict(zip(header, fields))
            fqdn = None if row["srv_fqdn"] == "-" else row["srv_fqdn"].rstrip(".")
            slots[row["srv_name"]] = (statuses.get(row["srv_name"]), fqdn, int(row["srv_port"]))
        return slots


def logged(log_path, text):
    with open(log_path, errors="replace") as handle:
        return text in handle.read()


def served(log_path, start=0):
    """{session id: {slot}} of the session requests HAProxy logged from byte `start` of its log on, and the end."""
    pattern = re.compile(r"\] feedback_host replicas/(\S+) .* \"[A-Z]+ /v1/sessions/([A-Za-z0-9_-]+)")
    with open(log_path, "rb") as handle:
        handle.seek(start)
        data = handle.read()
    result = {}
    for line in data.decode(errors="replace").splitlines():
        match = pattern.search(line)
        if match:
            result.setdefault(match.group(2), set()).add(match.group(1))
    return result, start + len(data)


def run(binary, workdir):
    config, service_name, port_name = kubernetes_balancer()
    dns = ServiceDNS(service_name, port_name)
    postgres = PostgresServer()
    replicas, balancer, threads, stop = {}, None, [], threading.Event()
    try:
        url = postgres.create_database("feedbackhost")
        log(f"PostgreSQL on port {postgres.port}, DNS server on 127.0.0.1:{dns.port} (UDP) for {dns.srv_name}")

        def start(label, port=0):
            replicas[label] = Replica.start(
                [binary, "--host", "127.0.0.1", "--port", str(port), "--journal-url", url], name=label,
                stderr=open(os.path.join(workdir, f"{label}.log"), "ab"))

        for label in ("pod-a", "pod-b", "pod-c"):
            start(label)
        dns.set_endpoints([(label, replicas[label].port, True) for label in ("pod-a", "pod-b", "pod-c")])

        certificate, _, _ = proxy_configs.self_signed_certificate(workdir)
        front, tls, stats = free_port(), free_port(), free_port()
        rendered = proxy_configs.render_haproxy_resolved(config, front, stats, tls, certificate, dns.port)
        changed = [(old.strip(), new.strip()) for old, new in proxy_configs.changed_lines(config, rendered)]
        expected = [
            ("parse-resolv-conf", f"nameserver t 127.0.0.1:{dns.port}"),
            (f"bind :8443 ssl crt {proxy_configs.CERTIFICATE} alpn h2,http/1.1",
             f"bind 127.0.0.1:{tls} ssl crt {certificate} alpn h2,http/1.1"),
            ("bind :8080", f"bind 127.0.0.1:{front}"),
            ("bind :8404", f"bind 127.0.0.1:{stats}"),
        ]
        if changed != expected:
            fail(f"the run's configuration differs from the ConfigMap's in more than its resolver and binds: {changed}")
        config_path, cli_socket = os.path.join(workdir, "haproxy.cfg"), os.path.join(workdir, "master.sock")
        with open(config_path, "w") as handle:
            handle.write(rendered)
        haproxy_log = os.path.join(workdir, "haproxy.log")
        balancer = Balancer(["haproxy", "-W", "-db", "-S", cli_socket, "-f", config_path], haproxy_log, front, stats)
        slots = Slots(balancer, cli_socket)
        log("HAProxy started with the ConfigMap's haproxy.cfg (only the resolver's nameserver and the binds changed)")

        def filled():
            return {slot: (status, fqdn, port) for slot, (status, fqdn, port) in slots.read().items() if fqdn}

        def slot_of(label):
            return next((slot for slot, (_, fqdn, _) in filled().items() if fqdn == dns.target(label)), None)

        def up(label):
            slot = slot_of(label)
            return slot is not None and filled()[slot][0] == "UP"

        wait_for("three slots filled from the SRV records and UP",
                 lambda: all(up(label) for label in ("pod-a", "pod-b", "pod-c")))
        state = slots.read()
        for label in ("pod-a", "pod-b", "pod-c"):
            _, _, port = state[slot_of(label)]
            if port != replicas[label].port:
                fail(f"{label}'s slot has port {port}, its SRV record says {replicas[label].port}")
        empty = sorted(slot for slot, (status, fqdn, _) in state.items() if fqdn is None)
        if len(state) != 10 or len(empty) != 7 or any(state[slot][0] != "MAINT (resolution)" for slot in empty):
            fail(f"expected 10 slots, 7 of them empty in maintenance: {state}")
        asked_a = {label: dns.asked(dns.target(label), "A") for label in ("pod-a", "pod-b", "pod-c")}
        if any(asked_a.values()):
            fail(f"HAProxy asked for addresses the SRV answer's additional section gave: {asked_a}")
        for label in ("pod-a", "pod-b", "pod-c"):
            if not logged(haproxy_log, f"replicas/{slot_of(label)} changed its IP from (none) to 127.0.0.1 by DNS "
                                       "additional record"):
                fail(f"HAProxy's log does not say that {slot_of(label)} took its address from the additional section")
        log(f"slots {', '.join(f'{slot_of(l)}={l}' for l in ('pod-a', 'pod-b', 'pod-c'))} filled from "
            f"{dns.asked(dns.srv_name, 'SRV')} SRV answers (ports from the records, addresses from their additional "
            f"section, no A query) and UP; {len(empty)} slots empty in maintenance")

        client = Client(balancer.base_url)
        sessions = []
        for number in range(SESSIONS):
            if number % 2 == 0:
                status, _, body = client.request("POST", "/v1/sessions", {"system": "counter"})
                session = body["id"] if status == 201 else None
            else:
                session = new_session_id()
                status, _, body = client.request("PUT", f"/v1/sessions/{session}", {"system": "counter"})
            if status != 201:
                fail(f"creating a session through HAProxy answered {status}: {body}")
            sessions.append(session)
        for session in sessions:
            status, _, body = client.request("GET", f"/v1/sessions/{session}")
            if status != 200 or body["state"] != {"count": 0}:
                fail(f"GET {session} after creation answered {status}: {body}")
        client.close()
        ledger = Ledger()
        for index in range(POSTERS):
            threads.append(threading.Thread(target=poster, args=(balancer.base_url, sessions, ledger, stop, index),
                                            daemon=True))
        for thread in threads:
            thread.start()
        wait_for("every session has acknowledged increments",
                 lambda: all(ledger.acknowledged.get(session, 0) > 0 for session in sessions), timeout=30)
        before, offset = served(haproxy_log)
        owners = {}
        for session in sessions:
            if len(before.get(session, ())) != 1:
                fail(f"session {session} was served by {before.get(session)} while the slots stood still")
            owners.setdefault(next(iter(before[session])), []).append(session)
        if sorted(owners) != sorted(slot_of(label) for label in ("pod-a", "pod-b", "pod-c")):
            fail(f"the sessions are not spread over the three slots: { {s: len(v) for s, v in owners.items()} }")
        log(f"{SESSIONS} sessions created through HAProxy ({SESSIONS // 2} by POST, {SESSIONS // 2} by PUT); "
            f"served by slot: { {slot: len(owned) for slot, owned in sorted(owners.items())} }; "
            f"{sum(ledger.acknowledged.values())} increments acknowledged so far")

        victim = max(("pod-a", "pod-b", "pod-c"), key=lambda label: len(owners[slot_of(label)]))
        victim_slot = slot_of(victim)
        moved = owners[victim_slot]
        acknowledged_before = {session: ledger.acknowledged.get(session, 0) for session in moved}
        dns.set_endpoints([(label, replicas[label].port, True) for label in ("pod-a", "pod-b", "pod-c")
                           if label != victim])
        removed_at = time.monotonic()
        code = replicas[victim].stop()
        log(f"{victim} ({victim_slot}, {len(moved)} sessions) left the DNS answer and stopped (exit {code})")
        wait_for(f"{victim_slot} goes DOWN by its health check",
                 lambda: slots.read()[victim_slot][0] == "DOWN", timeout=20)
        log(f"{victim_slot} DOWN by its health check; its address is still held (hold obsolete)")
        time.sleep(2)

        # A starting pod is in the answer before it listens (publishNotReadyAddresses): pod-d's record first, without
        # an additional record, so HAProxy must resolve its target itself; the replica starts once it has a slot.
        free_before = {slot for slot, (_, fqdn, _) in slots.read().items() if fqdn is None}
        pod_d_port = free_port()
        dns.set_endpoints([(label, replicas[label].port, True) for label in ("pod-a", "pod-b", "pod-c")
                           if label != victim] + [("pod-d", pod_d_port, False)])
        wait_for("pod-d's record takes a free slot", lambda: slot_of("pod-d") is not None, timeout=20)
        new_slot = slot_of("pod-d")
        if new_slot not in free_before or slots.read()[new_slot][2] != pod_d_port:
            fail(f"pod-d took {new_slot} ({slots.read()[new_slot]}), not a free slot with its port")
        if dns.asked(dns.target("pod-d"), "A") == 0 or not logged(
                haproxy_log, f"replicas/{new_slot} changed its IP from (none) to 127.0.0.1 by kube-dns/t"):
            fail("HAProxy filled pod-d's slot without resolving its target's address itself")
        seen = [slots.read()[new_slot][0]]
        start("pod-d", pod_d_port)

        def new_slot_up():
            status = slots.read()[new_slot][0]
            if status != seen[-1]:
                seen.append(status)
            return status == "UP"

        wait_for("pod-d's slot UP", new_slot_up, timeout=20)
        log(f"pod-d's record (no additional record) took the free slot {new_slot} with its SRV port, HAProxy asking "
            f"for its target's address itself ({dns.asked(dns.target('pod-d'), 'A')} A queries so far); the slot's "
            f"states from before pod-d listened until UP: {' -> '.join(seen)}")
        time.sleep(3)
        _, offset_new = served(haproxy_log)

        hold = int(re.search(r"(?m)^\s*hold obsolete (\d+)s$", config).group(1))
        wait_for(f"{victim_slot} empties once DNS has not answered it for {hold} s",
                 lambda: slots.read()[victim_slot][:2] == ("MAINT (resolution)", None),
                 timeout=max(hold + 15 - (time.monotonic() - removed_at), 1))
        log(f"{victim_slot} empty and in maintenance {time.monotonic() - removed_at:.0f} s after {victim} left the "
            f"answer")
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
        if any(thread.is_alive() for thread in threads):
            fail("a poster did not stop within 30 s")

        after, _ = served(haproxy_log, offset)
        late, _ = served(haproxy_log, offset_new)
        stranded = [session for session in moved if not after.get(session, set()) - {victim_slot}]
        if stranded:
            fail(f"{len(stranded)} of {victim}'s sessions were not served by another slot after it left")
        still = [session for session in moved if victim_slot in late.get(session, ())]
        if still:
            fail(f"{len(still)} of {victim}'s sessions were still served by {victim_slot} after it went DOWN")
        if not any(new_slot in slots_seen for slots_seen in late.values()):
            fail(f"pod-d's slot {new_slot} served no session")
        client = Client(balancer.base_url)
        wrong = []
        for session in sessions:
            status, _, body = client.request("GET", f"/v1/sessions/{session}")
            expected_count = ledger.acknowledged.get(session, 0)
            if status != 200 or body["state"]["count"] != expected_count or body["rev"] != expected_count:
                wrong.append(f"{session}: {status} {body}, acknowledged {expected_count}")
        client.close()
        if wrong:
            fail(f"{len(wrong)} sessions differ from what was acknowledged: {wrong[:5]}")
        if ledger.not_found:
            fail(f"{len(ledger.not_found)} requests answered 404: {ledger.not_found[:5]}")
        with open(haproxy_log, errors="replace") as handle:
            errors = collections.Counter(
                f"{match.group(2)} from {match.group(1)}" for match in
                re.finditer(r"\] feedback_host replicas/(\S+) \S+ (5\d\d) ", handle.read()))
        carried = sum(acknowledged_before.values())
        new_sessions = sum(1 for slots_seen in late.values() if new_slot in slots_seen)
        log(f"{sum(ledger.acknowledged.values())} increments acknowledged, every session answers 200 with exactly its "
            f"count through HAProxy; {victim}'s {len(moved)} sessions ({carried} increments acknowledged before it left) kept "
            f"their state on {sorted({s for m in moved for s in after.get(m, ())} - {victim_slot})}; pod-d's slot "
            f"served {new_sessions} sessions; statuses {dict(sorted(ledger.statuses.items(), key=str))} (HAProxy logged "
            f"{dict(sorted(errors.items())) or 'no 5xx'}, each retried with its key); no 404")
    finally:
        stop.set()
        if balancer is not None:
            balancer.stop()
        for replica in replicas.values():
            replica.stop()
        postgres.stop()
        dns.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    arguments = parser.parse_args()
    os.chdir(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

    def out_of_time(signum, frame):
        fail(f"not finished within {TIME_LIMIT_SECONDS} s")

    signal.signal(signal.SIGALRM, out_of_time)
    signal.alarm(TIME_LIMIT_SECONDS)
    with tempfile.TemporaryDirectory(prefix="kubernetes-dns-") as workdir:
        run(os.path.abspath(arguments.binary), workdir)
    signal.alarm(0)
    log(f"passed in {CHECK.elapsed():.1f} s")


if __name__ == "__main__":
    main()
