#!/usr/bin/env python3
"""Fake paged upstream for the paging system's fault tests: HTTP/1.1 on 127.0.0.1, GitHub-search-shaped pages.

GET /search?q=SCENARIO:KEY[&page=N][&cursor=C] answers by scenario; every request and every connection the client
closes early is logged per KEY. GET /wait?key=KEY&event=EVENT&count=N blocks (at most 20 s) until the log of KEY
holds N such events and answers the log as JSON (408 if it never did); GET /log?key=KEY answers it at once.
Prints the bound port on the first line of stdout; exits when stdin closes or on SIGTERM.
"""
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

logs = {}
changed = threading.Condition()


def record(key, event, **fields):
    with changed:
        logs.setdefault(key, []).append(dict(event=event, **fields))
        changed.notify_all()


def count(key, event):
    return sum(1 for entry in logs.get(key, []) if entry["event"] == event)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def send(self, status, body, extra=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def base(self, host="127.0.0.1"):
        return "http://%s:%d/search" % (host, self.server.server_port)

    def wait_for_close(self, key, page):
        # Nothing more is sent: the client either times out or is cancelled; either way it closes.
        try:
            self.connection.settimeout(30)
            self.connection.recv(1)
        except OSError:
            pass
        record(key, "closed", page=page)
        self.close_connection = True

    def do_GET(self):
        parsed = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(parsed.query).items()}
        if parsed.path == "/log":
            with changed:
                return self.send(200, logs.get(q["key"], []))
        if parsed.path == "/wait":
            key, event, wanted = q["key"], q["event"], int(q.get("count", "1"))
            with changed:
                ok = changed.wait_for(lambda: count(key, event) >= wanted, timeout=20)
                return self.send(200 if ok else 408, logs.get(key, []))
        if parsed.path != "/search":
            return self.send(404, {"error": "no route"})
        scenario, _, key = q.get("q", "").partition(":")
        page = int(q.get("page", "1"))
        record(key, "request", scenario=scenario, page=page, cursor=q.get("cursor"))
        attempt = sum(1 for e in logs[key] if e["event"] == "request" and e["scenario"] == scenario)
        items = [{"key": key, "page": page, "n": i} for i in range(2)]

        def link(number, host="127.0.0.1", target=None):
            return ("Link", '<%s?q=%s:%s&page=%d>; rel="next"' % (self.base(host), target or scenario, key, number))

        if scenario == "pages":
            extra = [link(page + 1)] if page < 3 else []
            return self.send(200, {"total_count": 6, "items": items}, extra)
        if scenario == "endless":
            return self.send(200, {"total_count": 1000, "items": items}, [link(page + 1)])
        if scenario == "flaky":
            if attempt <= 2:
                return self.send(500, {"error": "flaky"})
            return self.send(200, {"items": items})
        if scenario == "limited":
            if attempt == 1:
                return self.send(429, {"message": "rate limited"}, [("Retry-After", "30")])
            return self.send(200, {"items": items})
        if scenario == "unavailable":
            return self.send(503, {"message": "down"}, [("Retry-After", "1")])
        if scenario == "hang":
            if attempt == 1:
                return self.wait_for_close(key, page)
            return self.send(200, {"items": items})
        if scenario == "malformed":
            return self.send(200, '{"total_count": 2, "items": [{"n": 1}, ')
        if scenario == "wrongshape":
            return self.send(200, {"items": "none"})
        if scenario == "slow":
            # The head and half the body at once, the rest 30 ms at a time.
            body = json.dumps({"items": items, "padding": "x" * 200}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            half = len(body) // 2
            try:
                self.wfile.write(body[:half])
                self.wfile.flush()
                if attempt == 1 and q.get("stall") != "no":
                    return self.wait_for_close(key, page)
                for start in range(half, len(body), 40):
                    time.sleep(0.03)
                    self.wfile.write(body[start : start + 40])
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                record(key, "closed", page=page)
                self.close_connection = True
            return
        if scenario == "dribble":
            body = json.dumps({"items": items, "padding": "x" * 200}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for start in range(0, len(body), 40):
                time.sleep(0.03)
                self.wfile.write(body[start : start + 40])
                self.wfile.flush()
            return
        if scenario == "foreign":
            if page == 1:
                return self.send(200, {"items": items}, [link(2, host="localhost")])
            return self.send(200, {"items": items})
        if scenario == "cursor":
            cursor = q.get("cursor")
            if cursor is None:
                return self.send(200, {"items": items, "next": "c2"})
            return self.send(200, {"items": [{"key": key, "cursor": cursor}], "next": None})
        if scenario == "circle":
            # Page 2 names itself as the next page: a cursor that comes back.
            return self.send(200, {"items": items}, [link(2)])
        return self.send(404, {"error": "no scenario " + scenario})


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def handle_error(self, request, client_address):
        pass


def exit_when_parent_goes():
    sys.stdin.buffer.read()
    os._exit(0)


def main():
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    threading.Thread(target=exit_when_parent_goes, daemon=True).start()
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
