#!/usr/bin/env python3
"""How fast a manual clock moves (`--clock manual`, docs/API.md "A clock tests move").

Starts the server with a manual clock, starts N traffic lights, then advances the clock by one full cycle (8 s) per
POST /v1/clock/advance, ROUNDS times, and prints the timers fired per second of wall time and the wall time per
advance. Each advance fires every light's three phase timers in deadline order and waits until each was reduced.

    python3 Benchmarks/scripts/clock-advance.py BINARY [--lights N] [--rounds R] [--data-dir DIR|none]
"""

import argparse
import json
import subprocess
import time
import urllib.request


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--lights", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--data-dir", default="none")
    arguments = parser.parse_args()
    server = subprocess.Popen(
        [arguments.binary, "--port", "0", "--data-dir", arguments.data_dir, "--clock", "manual",
         "--log-level", "warning"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    base = server.stdout.readline().split()[-1]

    def call(method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.load(response)

    try:
        for _ in range(arguments.lights):
            light = call("POST", "/v1/sessions", {"system": "traffic-light"})["id"]
            call("POST", f"/v1/sessions/{light}/events", {"type": "start"})
        call("POST", "/v1/clock/advance", {"milliseconds": 0})
        fired = 0
        start = time.perf_counter()
        for _ in range(arguments.rounds):
            fired += call("POST", "/v1/clock/advance", {"milliseconds": 8000})["timersFired"]
        elapsed = time.perf_counter() - start
        print(f"{arguments.lights} lights, {arguments.rounds} advances of 8 s (data dir {arguments.data_dir}): "
              f"{fired} timers fired in {elapsed:.3f} s: {fired / elapsed:.0f} timers/s, "
              f"{elapsed / arguments.rounds * 1000:.1f} ms per advance")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
