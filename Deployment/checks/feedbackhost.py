"""Small stdlib helpers for the deployment checks: start and stop a feedback-host, talk HTTP/JSON and SSE to it."""

import base64
import http.client
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "ConformanceChecks"))
import answer_words  # noqa: E402

# Every JSON answer the checks read through http.client is checked for our Swift type names.
answer_words.watch_http_client()

STOP_SECONDS = 15


def new_session_id():
    """A client-chosen session id: 16 random bytes, base64url without padding (22 characters)."""
    return base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode()


class Replica:
    """One feedback-host process; `port` is read from its first line on standard output."""

    def __init__(self, process, port, name):
        self.process = process
        self.port = port
        self.name = name
        self.base_url = f"http://127.0.0.1:{port}"

    @classmethod
    def start(cls, command, name, timeout=20, stderr=None, env=None):
        """`stderr`: a file its standard error (its log) goes to, else nowhere; `env`: its whole environment."""
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr or subprocess.DEVNULL,
                                   start_new_session=True, env=env)
        deadline = time.monotonic() + timeout
        line = b""
        while not line.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([process.stdout], [], [], max(remaining, 0))
            if not ready:
                cls._kill(process)
                raise SystemExit(f"{name}: no 'listening on' line within {timeout} s")
            chunk = os.read(process.stdout.fileno(), 1)
            if not chunk:
                cls._kill(process)
                raise SystemExit(f"{name}: exited before listening (code {process.wait()})")
            line += chunk
        match = re.search(rb"listening on http://[^:]+:(\d+)", line)
        if not match:
            cls._kill(process)
            raise SystemExit(f"{name}: unexpected first line {line!r}")
        return cls(process, int(match.group(1)), name)

    @staticmethod
    def _kill(process):
        if process.poll() is None:
            process.kill()
            process.wait(timeout=STOP_SECONDS)

    def stop(self):
        """SIGTERM, then SIGKILL if it has not exited within STOP_SECONDS; returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=STOP_SECONDS)
        if self.process.stdout:
            self.process.stdout.close()
        return self.process.returncode


class Client:
    """A keep-alive HTTP/1.1 JSON client for one host; reconnects once when the server closed the connection."""

    def __init__(self, base_url, timeout=10):
        host, _, port = base_url.removeprefix("http://").partition(":")
        self.host, self.port, self.timeout = host, int(port), timeout
        self.connection = None

    def request(self, method, path, body=None, headers=None):
        """(status, headers, parsed JSON body or None)."""
        payload = None if body is None else json.dumps(body).encode()
        all_headers = {"Content-Type": "application/json"} if payload is not None else {}
        all_headers.update(headers or {})
        for attempt in (0, 1):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self.connection.request(method, path, body=payload, headers=all_headers)
                response = self.connection.getresponse()
                data = response.read()
                break
            except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine):
                self.close()
                if attempt:
                    raise
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        parsed = None
        if data and "json" in (response.getheader("Content-Type") or ""):
            parsed = json.loads(data)
        return response.status, dict(response.getheaders()), parsed

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class EventStream:
    """A server-sent event stream read over one connection; `next_event` returns (event, id, data) or None."""

    def __init__(self, base_url, path, timeout=10, headers=None):
        host, _, port = base_url.removeprefix("http://").partition(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
        self.connection.request("GET", path, headers={"Accept": "text/event-stream", **(headers or {})})
        self.response = self.connection.getresponse()
        self.status = self.response.status

    def next_event(self):
        event, event_id, data = "message", None, []
        while True:
            line = self.response.readline()
            if not line:
                return None
            line = line.decode().rstrip("\r\n")
            if line == "":
                if data:
                    return event, event_id, "\n".join(data)
                event, event_id, data = "message", None, []
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                event = value
            elif name == "id":
                event_id = value
            elif name == "data":
                data.append(value)

    def close(self):
        self.connection.close()


def metric(text, name, labels=None):
    """The value of one sample in Prometheus text, or None."""
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        match = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
        if not match or match.group(1) != name:
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2) or ""))
        if all(found.get(k) == v for k, v in (labels or {}).items()):
            return float(match.group(3))
    return None
