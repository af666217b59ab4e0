#!/usr/bin/env python3
"""The first request to a session that is not in memory and was not passivated cleanly (its owner was SIGKILLed
after EVENTS events since its snapshot), with the SQLite journal and with the PostgreSQL journal: the new server reads
the session and folds its events on that request. Client-side latency of one GET per session over keep-alive.

Usage (as root, from Benchmarks/): scripts/activation-bench.py [SESSIONS=200] [EVENTS=1000]
PostgreSQL: a private server started here (initdb into a temporary directory as the user feedbackhost-bench).
"""
import glob, http.client, json, os, shutil, signal, socket, subprocess, sys, tempfile, time

SESSIONS = int(sys.argv[1]) if len(sys.argv) > 1 else 200
EVENTS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
BINARY = os.path.abspath("../.build/release/feedback-host")
PG_BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
USER = "feedbackhost-bench"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(flags):
    port = free_port()
    process = subprocess.Popen([BINARY, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
                                "--journal-snapshot-interval", "1000000"] + flags,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = process.stdout.readline().decode()
    assert line.startswith("listening on"), line
    return process, port


def request(connection, method, path, body=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    return response.status, response.read()


def run(mode, flags):
    server, port = start_server(flags)
    connection = http.client.HTTPConnection("127.0.0.1", port)
    ids = []
    batch = json.dumps({"events": [{"type": "increment"}] * 100})
    for _ in range(SESSIONS):
        status, body = request(connection, "POST", "/v1/sessions", json.dumps({"system": "counter"}))
        assert status == 201, body
        ids.append(json.loads(body)["id"])
    for sid in ids:
        for _ in range(EVENTS // 100):
            status, body = request(connection, "POST", f"/v1/sessions/{sid}/events", batch)
            assert status == 200, body
    connection.close()
    server.send_signal(signal.SIGKILL)
    server.wait()
    server, port = start_server(flags)
    connection = http.client.HTTPConnection("127.0.0.1", port)
    times = []
    for sid in ids:
        start = time.perf_counter()
        status, body = request(connection, "GET", f"/v1/sessions/{sid}")
        times.append((time.perf_counter() - start) * 1000)
        assert status == 200 and json.loads(body)["rev"] == EVENTS, body
    connection.close()
    server.send_signal(signal.SIGTERM)
    server.wait()
    times.sort()
    pick = lambda q: times[min(len(times) - 1, int(q * len(times)))]
    print(f"{mode:9} {SESSIONS} sessions, {EVENTS} events each after the snapshot: first GET "
          f"p50 {pick(0.5):.2f} ms  p99 {pick(0.99):.2f} ms  max {times[-1]:.2f} ms")


work = tempfile.mkdtemp()
os.chmod(work, 0o755)
pg = None
try:
    subprocess.run(["id", "-u", USER], capture_output=True).returncode == 0 or subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER], check=True)
    as_pg = ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--init-groups", "--"]
    os.mkdir(f"{work}/pg")
    shutil.chown(f"{work}/pg", USER)
    subprocess.run(as_pg + [f"{PG_BIN}/initdb", "-D", f"{work}/pg/data", "-A", "trust", "-U", USER, "-E", "UTF8",
                            "--locale=C"], check=True, stdout=subprocess.DEVNULL)
    pg_port = free_port()
    pg = subprocess.Popen(as_pg + [f"{PG_BIN}/postgres", "-D", f"{work}/pg/data", "-p", str(pg_port), "-k",
                                   f"{work}/pg", "-c", "listen_addresses=127.0.0.1"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if subprocess.run([f"{PG_BIN}/pg_isready", "-h", "127.0.0.1", "-p", str(pg_port), "-q"]).returncode == 0:
            break
        time.sleep(0.1)
    subprocess.run([f"{PG_BIN}/psql", "-h", "127.0.0.1", "-p", str(pg_port), "-U", USER, "-d", "postgres", "-qc",
                    "CREATE DATABASE activation"], check=True)
    run("sqlite", ["--data-dir", f"{work}/data"])
    run("postgres", ["--journal-url", f"postgres://{USER}@127.0.0.1:{pg_port}/activation"])
finally:
    if pg:
        pg.send_signal(signal.SIGQUIT)
        pg.wait()
    shutil.rmtree(work, ignore_errors=True)
