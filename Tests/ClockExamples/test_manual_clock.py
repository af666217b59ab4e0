"""Integration tests against a local FeedbackHost whose clock the tests move (`--clock manual`).

The example of docs/API.md ("A clock tests move"), run by `make test`: a traffic light through its whole cycle and a
Play Catch throw-back, each timer crossed in milliseconds by POST /v1/clock/advance instead of waited for.

    SERVER_BINARY=.build/debug/feedback-host python3 -m pytest -q Tests/ClockExamples
"""

import json
import os
import subprocess
import urllib.request
from pathlib import Path

import pytest

BINARY = os.environ.get(
    "SERVER_BINARY", str(Path(__file__).resolve().parents[2] / ".build" / "debug" / "feedback-host")
)


@pytest.fixture
def server():
    """A server on a free loopback port with a manual clock and no journal; stopped (by its pid) afterwards."""
    process = subprocess.Popen(
        [BINARY, "--host", "127.0.0.1", "--port", "0", "--data-dir", "none", "--clock", "manual"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        line = process.stdout.readline()  # "listening on http://127.0.0.1:PORT"
        assert line.startswith("listening on http://"), line
        yield line.split()[-1]
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def call(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def advance(base, milliseconds):
    """Moves the clock; answers once every timer due fired and what it started has settled."""
    return call(base, "POST", "/v1/clock/advance", {"milliseconds": milliseconds})


def state(base, session):
    return call(base, "GET", f"/v1/sessions/{session}")["state"]


def test_traffic_light_runs_its_whole_cycle(server):
    light = call(server, "POST", "/v1/sessions", {"system": "traffic-light"})["id"]
    call(server, "POST", f"/v1/sessions/{light}/events", {"type": "start"})
    advance(server, 0)  # the first phase's deadline is in the state once this answers
    for phase, duration, following in [("red", 4000, "green"), ("green", 3000, "yellow"), ("yellow", 1000, "red")]:
        advance(server, duration - 1)
        assert state(server, light)["phase"] == phase
        advance(server, 1)
        assert state(server, light)["phase"] == following
    assert state(server, light)["changes"] == 3


def test_play_catch_throws_back_after_one_second(server):
    game = call(server, "POST", "/v1/sessions", {"system": "catch"})["id"]
    call(server, "POST", f"/v1/sessions/{game}/events", {"type": "throwToMachine"})
    advance(server, 999)
    assert state(server, game)["holder"] == "machine"
    advance(server, 1)
    ball = state(server, game)
    assert ball["holder"] == "human"
    assert ball["throwCount"] == 2


def test_the_clock_says_what_time_it_is(server):
    before = call(server, "GET", "/v1/clock")
    after = advance(server, 60_000)
    assert after["now"] == before["now"] + 60_000
    assert call(server, "GET", "/v1/clock")["mode"] == "manual"
