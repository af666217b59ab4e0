#!/usr/bin/env python3
"""One page watches 12 sessions over HTTP/2 through HAProxy (part of `make test`; issue 21, "HTTP/2 at the edge").

Over HTTP/1.1 a browser opens at most 6 connections per origin and each EventSource holds one, so a page with a
dozen streams stalls. This starts three feedback-host replicas on loopback with tokens required (`--auth jwt
--auth-create open`, one server key for all, as the container image runs), HAProxy with the shipped
Deployment/haproxy/haproxy.cfg (ports filled in, a self-signed certificate made with openssl in place of the mounted
secret), and headless Chromium (selenium) on HAProxy's HTTPS port. The page's own client.js creates 12 sessions
(PUT, client-chosen ids, so each lands on its owner replica), opens a stream for each with its read token, posts an
event to each with its post token, and every one of the 12 streams must show it. Then it checks that HTTP/2 carried
it all: the page's navigation and every fetch report `nextHopProtocol` "h2", and HAProxy logged the 12 streams as
HTTP/2.0. Last, no token used appears in HAProxy's log or in any replica's log.

Binds 127.0.0.1 only; stops every process it starts (by pid, process groups of their own); bounded by an alarm.

    python3 Deployment/checks/h2_browser_test.py --binary .build/debug/feedback-host
"""

import argparse
import os
import re
import signal
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "Tests", "Browser"))
import proxy_configs  # noqa: E402
from browser_test import browser, check_answer_bodies  # noqa: E402
from cluster_test import Balancer, Check, free_port, http_get_text  # noqa: E402
from feedbackhost import Replica, new_session_id  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

SESSIONS = 12
REPLICAS = 3
TIME_LIMIT_SECONDS = 150
WAIT = 30
CHECK = Check("h2-browser-test")
log, fail, wait_for = CHECK.log, CHECK.fail, CHECK.wait_for


def until(driver, what, script, *arguments):
    try:
        return WebDriverWait(driver, WAIT, poll_frequency=0.1).until(lambda d: d.execute_script(script, *arguments))
    except Exception as error:
        state = driver.execute_script("return JSON.stringify({counts: window.counts, problems: window.problems})")
        fail(f"timed out waiting for {what}; page: {state} ({type(error).__name__})")


def run_page(driver, base, ids):
    """Creates, watches and posts to the sessions from the page; returns every token it was given."""
    driver.get(base + "/")
    until(driver, "client.js", "return typeof FeedbackHost === 'object'")
    created = driver.execute_async_script("""
        const [ids, done] = [arguments[0], arguments[arguments.length - 1]];
        window.counts = {};
        window.watched = {};
        window.problems = [];
        Promise.all(ids.map((id) => FeedbackHost.create("counter", {id}))).then((answers) => {
          for (const created of answers) {
            window.counts[created.id] = null;
            window.watched[created.id] = FeedbackHost.open(created.id, {
              token: created.tokens.read,
              onState: (state) => { window.counts[created.id] = state.count; },
              onError: (error) => window.problems.push(created.id + ": " + error.message),
              onEnded: (reason) => window.problems.push(created.id + " ended: " + reason),
            });
          }
          done(answers.map((created) => ({id: created.id, tokens: created.tokens})));
        }, (error) => done({error: String(error)}));
    """, ids)
    if not isinstance(created, list) or sorted(c["id"] for c in created) != sorted(ids):
        fail(f"creating the sessions from the page answered {created}")
    log(f"the page created {len(created)} sessions (PUT through HAProxy), each answered with its tokens")
    until(driver, f"all {SESSIONS} streams live at count 0",
          "return Object.values(window.watched).every((s) => s.status === 'live')"
          " && Object.values(window.counts).every((c) => c === 0)")
    log(f"all {SESSIONS} streams are open at once on the page (status live, count 0)")
    posted = driver.execute_async_script("""
        const [sessions, done] = [arguments[0], arguments[arguments.length - 1]];
        Promise.all(sessions.map((s) => fetch("/v1/sessions/" + s.id + "/events", {method: "POST",
            headers: {"Content-Type": "application/json", "Authorization": "Bearer " + s.tokens.post},
            body: JSON.stringify({type: "increment"})}).then((r) => r.text().then(() => r.status))))
          .then(done, (e) => done([String(e)]));
    """, created)
    if posted != [200] * SESSIONS:
        fail(f"posting an event to each session answered {posted}")
    until(driver, f"all {SESSIONS} streams to show the posted event",
          "return Object.values(window.counts).every((c) => c === 1)")
    still_live = driver.execute_script("return Object.values(window.watched).every((s) => s.status === 'live')")
    if not still_live:
        fail("a stream was not live after the update")
    log(f"an event posted to each session: every one of the {SESSIONS} streams showed count 1")
    protocols = driver.execute_script("""
        return {
          navigation: performance.getEntriesByType("navigation")[0].nextHopProtocol,
          resources: performance.getEntriesByType("resource").map((e) => [e.name, e.nextHopProtocol]),
        };
    """)
    if protocols["navigation"] != "h2":
        fail(f"the page came over {protocols['navigation']!r}, not h2")
    fetched = [entry for entry in protocols["resources"] if "/v1/sessions/" in entry[0]]
    if len(fetched) < 2 * SESSIONS or any(protocol != "h2" for _, protocol in protocols["resources"]):
        fail(f"resources not over h2 (or missing): {protocols['resources']}")
    log(f"nextHopProtocol: the page and all {len(protocols['resources'])} resources it fetched (client.js, "
        f"{len(fetched)} PUTs and POSTs) came over h2")
    driver.execute_script("for (const s of Object.values(window.watched)) s.close();")
    return [token for c in created for token in c["tokens"].values()]


def ids_on_every_replica(balancer, haproxy_log, names):
    """SESSIONS new ids, SESSIONS / REPLICAS of them on each replica by HAProxy's hash.

    Ids drawn at random could all miss a replica (about 1 run in 100 with 12 ids on 3 replicas), and then that
    replica's log would prove nothing about tokens. Each candidate is asked for once through HAProxy's plain port
    (the answer does not matter) and HAProxy's log says which replica the hash chose.
    """
    wanted = SESSIONS // REPLICAS
    chosen = {name: [] for name in names}
    for _ in range(40 * SESSIONS):
        if all(len(ids) >= wanted for ids in chosen.values()):
            return [session for ids in chosen.values() for session in ids]
        candidate = new_session_id()
        http_get_text(balancer.port, f"/v1/sessions/{candidate}")  # a 401 answers too: only the route matters

        def routed():
            with open(haproxy_log, errors="replace") as handle:
                for line in handle:
                    if f"/v1/sessions/{candidate} " in line:
                        return re.search(r" replicas/(\S+) ", line).group(1)
            return None

        wait_for(f"HAProxy to log the probe of {candidate}", lambda: routed() is not None)
        server = routed()
        if server in chosen and len(chosen[server]) < wanted:
            chosen[server].append(candidate)
    fail(f"no {wanted} ids for every replica among {40 * SESSIONS} candidates: {chosen}")


def run(binary, workdir):
    replicas, balancer, driver = [], None, None
    key = os.path.join(workdir, "auth.key")
    with open(key, "wb") as handle:
        handle.write(os.urandom(32))
    logs = []
    try:
        for index in range(1, REPLICAS + 1):
            path = os.path.join(workdir, f"feedback-host-{index}.log")
            logs.append(path)
            with open(path, "wb") as stderr:
                replicas.append(Replica.start(
                    [binary, "--host", "127.0.0.1", "--port", "0", "--data-dir", "none",
                     "--auth", "jwt", "--auth-create", "open", "--auth-key-file", key],
                    name=f"feedback-host-{index}", stderr=stderr))
        combined, _, _ = proxy_configs.self_signed_certificate(workdir)
        port, tls_port, stats_port = free_port(), free_port(), free_port()
        with open(os.path.join(ROOT, proxy_configs.HAPROXY)) as handle:
            rendered = proxy_configs.render_haproxy(handle.read(), port, stats_port, [r.port for r in replicas],
                                                    tls_port=tls_port, certificate=combined)
        config = os.path.join(workdir, "haproxy.cfg")
        with open(config, "w") as handle:
            handle.write(rendered)
        haproxy_log = os.path.join(workdir, "haproxy.log")
        logs.append(haproxy_log)
        balancer = Balancer(["haproxy", "-db", "-f", config], haproxy_log, port, stats_port)
        names = sorted(r.name for r in replicas)
        wait_for("HAProxy sees every replica UP",
                 lambda: sorted(s for s, v in balancer.server_states().items() if v == "UP") == names)
        log(f"replicas {[r.port for r in replicas]} (--auth jwt), HAProxy https://127.0.0.1:{tls_port} "
            f"(alpn h2,http/1.1, self-signed certificate)")

        driver = browser(os.path.join(workdir, "profile"), flags=("--ignore-certificate-errors",))
        ids = ids_on_every_replica(balancer, haproxy_log, names)
        log(f"{SESSIONS} session ids chosen so that HAProxy's hash gives each replica {SESSIONS // REPLICAS}")
        tokens = run_page(driver, f"https://127.0.0.1:{tls_port}", ids)
        log(check_answer_bodies(driver))
        driver.quit()
        driver = None

        # HAProxy logs a stream when it ends: the browser is gone, so all of them end now.
        def stream_lines():
            with open(haproxy_log, errors="replace") as handle:
                return [line for line in handle if re.search(r'"GET /v1/sessions/[\w-]{22}/stream HTTP/', line)]

        wait_for(f"HAProxy to log the {SESSIONS} streams", lambda: len(stream_lines()) >= SESSIONS)
        versions = {re.search(r'HTTP/([\d.]+)"', line).group(1) for line in stream_lines()}
        if versions != {"2.0"}:
            fail(f"HAProxy logged the streams as HTTP/{versions}, expected 2.0 only")
        log(f"HAProxy's log: the {len(stream_lines())} streams came over HTTP/2.0")
    finally:
        if driver is not None:
            driver.quit()
        if balancer is not None:
            balancer.stop()
        for replica in replicas:
            replica.stop()
    for path in logs:
        with open(path, errors="replace") as handle:
            text = handle.read()
        if "/v1/sessions/" not in text:
            fail(f"{os.path.basename(path)} logged no session request: the search below would prove nothing")
        if path != haproxy_log and "method=PUT route=/v1/sessions/" not in text:
            fail(f"{os.path.basename(path)} logged none of the page's PUTs (the probes only GET): the search below "
                 "would prove nothing")
        leaked = [token for token in tokens if token in text]
        if leaked:
            fail(f"{os.path.basename(path)} holds {len(leaked)} of the tokens used")
    log(f"none of the {len(tokens)} tokens used is in HAProxy's log or the replicas' logs")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/debug/feedback-host")
    args = parser.parse_args()

    def timed_out(_signal, _frame):
        raise SystemExit(f"h2-browser-test: FAILED: over {TIME_LIMIT_SECONDS} s")

    signal.signal(signal.SIGALRM, timed_out)
    signal.alarm(TIME_LIMIT_SECONDS)
    with tempfile.TemporaryDirectory(prefix="h2-browser-test-") as workdir:
        try:
            run(os.path.abspath(args.binary), workdir)
        except SystemExit:
            path = os.path.join(workdir, "haproxy.log")
            if os.path.exists(path):
                with open(path, errors="replace") as handle:
                    tail = handle.read().splitlines()[-15:]
                print("haproxy.log (last lines):\n  " + "\n  ".join(tail), file=sys.stderr)
            raise
    log(f"passed in {CHECK.elapsed():.1f} s")


if __name__ == "__main__":
    main()
