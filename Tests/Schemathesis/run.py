#!/usr/bin/env python3
"""Checks openapi.yaml against the running server with schemathesis, in a bounded time.

Starts the debug binary on 127.0.0.1:0 with the journal on (in .build/schemathesis/data, made anew each run) and
first checks that openapi.yaml's schemas of the systems are what they publish (GET /v1/systems/{name}, written by
`make openapi`: openapi_systems.py), so the events and states generated are those the macros derived. It runs
`schemathesis run` on openapi.yaml over every operation but the event stream (it never ends), with hooks.py giving
the `{id}` routes real sessions, and fails on any finding:
a 5xx or a dropped connection, a status, content type, header or body the document does not allow, data the
document calls valid that the server refuses (or the reverse), a method the server takes that the document does
not list. The server is stopped by its pid whatever happens; its log and its journal are kept in .build/schemathesis/.

    python3 Tests/Schemathesis/run.py [--binary PATH] [--seed N] [--max-examples N] [--max-time SECONDS]

The budget is time, not cases: schemathesis repeats its phases (100 cases per operation and phase each time) for
90 s, so a busy machine runs fewer cases, not longer; past --time-limit (240 s) the run counts as failed.
"""

import argparse
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
# Allowed in preflights, so that both answers of OPTIONS are reached (the document's Origin example).
CORS_ORIGIN = "https://app.example.com"
CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
        "negative_data_rejection",
        "positive_data_acceptance",
        "unsupported_method",
        "use_after_free",
        "ensure_resource_availability",
        # hooks.py's: no answer names one of our Swift types (Tests/ConformanceChecks/answer_words.py).
        "no_type_names_in_answers",
    ]
)


def default_binary() -> str:
    path = subprocess.run(
        ["swift", "build", "--show-bin-path"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    return str(Path(path) / "feedback-host")


def start_server(binary: str, log: Path, log_level: str, data: Path) -> tuple[subprocess.Popen, str]:
    """Starts the server; returns it and its base URL, read from its first line of output."""
    # --clock manual: GET /v1/clock and POST /v1/clock/advance are served (and checked) only with it. The journal (in
    # `data`, as shipped) is on: the inspection routes (history, states, diff, export, forks) answer 409 without it.
    server = subprocess.Popen(
        [binary, "--host", "127.0.0.1", "--port", "0", "--data-dir", str(data), "--cors-origins", CORS_ORIGIN,
         "--log-level", log_level, "--clock", "manual"],
        stdout=subprocess.PIPE,
        stderr=log.open("wb"),
        cwd=ROOT,
    )
    selector = selectors.DefaultSelector()
    selector.register(server.stdout, selectors.EVENT_READ)
    line = b""
    deadline = time.monotonic() + 15
    while not line.endswith(b"\n") and time.monotonic() < deadline and server.poll() is None:
        if selector.select(timeout=0.2):
            chunk = os.read(server.stdout.fileno(), 1)
            if not chunk:
                break
            line += chunk
    selector.close()
    text = line.decode(errors="replace").strip()
    if not text.startswith("listening on http://127.0.0.1:"):
        stop_server(server)
        raise SystemExit(f"schemathesis: the server did not start (first line {text!r}); see {log}")
    return server, text.removeprefix("listening on ")


def published_schemas(base: str) -> list[dict]:
    """Every system the server hosts, as GET /v1/systems/{name} publishes it."""
    with urllib.request.urlopen(f"{base}/v1/systems", timeout=10) as response:
        names = [system["name"] for system in json.load(response)["systems"]]
    systems = []
    for name in names:
        with urllib.request.urlopen(f"{base}/v1/systems/{name}", timeout=10) as response:
            systems.append(json.load(response))
    return systems


def stop_server(server: subprocess.Popen) -> int | None:
    """Stops the server by its pid: SIGTERM, then SIGKILL after 10 s. Returns its exit status."""
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return server.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", help="feedback-host to test (default: the debug build's)")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--max-examples", type=int, default=100, help="test cases per operation and phase, per cycle")
    parser.add_argument("--max-time", type=int, default=90, help="seconds of testing: phases repeat until spent")
    parser.add_argument("--log-level", default="warning", help="the server's (info logs every request)")
    parser.add_argument("--time-limit", type=int, default=240, help="seconds before the run counts as failed")
    arguments = parser.parse_args()

    out = ROOT / ".build" / "schemathesis"
    out.mkdir(parents=True, exist_ok=True)
    log = out / "server.log"
    data = out / "data"
    shutil.rmtree(data, ignore_errors=True)
    server, base = start_server(arguments.binary or default_binary(), log, arguments.log_level, data)
    started = time.monotonic()
    try:
        systems = published_schemas(base)
        # openapi.yaml's schemas of the systems are written from what they publish (make openapi); a stale copy
        # would test the document's word, not the systems'.
        from openapi_systems import stale

        diff = stale(systems)
        if diff:
            raise SystemExit(f"openapi.yaml's systems are not what the server publishes; run `make openapi`:\n{diff}")
    except BaseException:
        stop_server(server)
        raise
    document = ROOT / "openapi.yaml"
    command = [
        sys.executable, "-m", "schemathesis.cli", "--config-file", str(HERE / "schemathesis.toml"),
        "run", str(document),
        "--url", base,
        "--checks", CHECKS,
        "--exclude-operation-id", "streamSession",
        "--max-examples", str(arguments.max_examples),
        "--max-time", str(arguments.max_time),
        "--seed", str(arguments.seed),
        "--workers", "1",
        "--request-timeout", "10",
        "--generation-database", "none",
        "--suppress-health-check", "all",
        "--report", "junit",
        "--report-dir", str(out),
        "--no-color",
    ]
    environment = dict(
        os.environ,
        SCHEMATHESIS_HOOKS="hooks",
        PYTHONPATH=os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])),
        OPENAPI_TEST_BASE=base,
        OPENAPI_TEST_SEED=str(arguments.seed),
        # Which system each client event type belongs to, from the published schemas (hooks.py routes posts by it).
        OPENAPI_TEST_EVENT_SYSTEMS=json.dumps(
            {event: system["name"] for system in systems for event in system["clientEvents"]}
        ),
    )
    status = 1
    run = None
    try:
        run = subprocess.Popen(command, cwd=out, env=environment, start_new_session=True)
        status = run.wait(timeout=arguments.time_limit)
    except subprocess.TimeoutExpired:
        print(f"schemathesis: no verdict within {arguments.time_limit} s", file=sys.stderr)
    finally:
        # schemathesis runs in its own process group (its id is the pid of the process this script started).
        if run is not None and run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
        alive = server.poll() is None
        exit_status = stop_server(server)
    elapsed = time.monotonic() - started
    if not alive:
        print(f"schemathesis: the server died during the run (status {exit_status}); see {log}", file=sys.stderr)
        status = status or 1
    print(f"schemathesis: {'passed' if status == 0 else 'FAILED'} in {elapsed:.0f} s (seed {arguments.seed})")
    return status


if __name__ == "__main__":
    sys.exit(main())
