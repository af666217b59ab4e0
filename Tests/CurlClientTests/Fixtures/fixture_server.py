#!/usr/bin/env python3
"""Fixture upstream for the CurlClient tests: HTTP/1.1 keep-alive on 127.0.0.1, one route per scenario.

Started by the tests with port 0; prints the bound port on the first line of stdout and serves until terminated.
Every response carries X-Connection-Id (a counter per accepted connection) so tests can prove reuse.
"""
import gzip
import itertools
import json
import os
import signal
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

connection_ids = itertools.count(1)
stream_states = {}
states_lock = threading.Lock()


def set_state(key, value):
    with states_lock:
        stream_states[key] = value


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.connection_id = next(connection_ids)

    def log_message(self, format, *args):
        pass

    # -- helpers

    def query(self):
        parsed = urlparse(self.path)
        return parsed.path, {k: v[0] for k, v in parse_qs(parsed.query).items()}

    def send_body(self, status, body, content_type="application/json", extra=()):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Connection-Id", str(self.connection_id))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def start_chunked(self, content_type="text/plain"):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("X-Connection-Id", str(self.connection_id))
        self.end_headers()
        self.wfile.flush()

    def chunk(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_chunked(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # -- routes

    def do_HEAD(self):
        self.do_GET()

    def do_POST(self):
        self.echo()

    def do_PUT(self):
        self.echo()

    def do_DELETE(self):
        self.echo()

    def echo(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length) if length else b""
        reply = {
            "method": self.command,
            "path": self.path,
            "body": body.decode(errors="replace"),
            "contentType": self.headers.get("Content-Type"),
            "custom": self.headers.get("X-Custom"),
        }
        self.send_body(200, json.dumps(reply))

    def do_GET(self):
        path, q = self.query()
        if path == "/echo":
            return self.echo()
        if path == "/json":
            return self.send_body(200, json.dumps({"ok": True, "i": q.get("i")}))
        if path == "/status-code":
            return self.send_body(int(q["code"]), json.dumps({"error": "as asked"}))
        if path == "/items":
            return self.items(q)
        if path == "/gzip":
            payload = json.dumps({"compressed": True, "filler": "x" * 2000}).encode()
            encoding = self.headers.get("Accept-Encoding", "")
            extra = [("X-Seen-Accept-Encoding", encoding)]
            if "gzip" in encoding:
                return self.send_body(200, gzip.compress(payload), extra=extra + [("Content-Encoding", "gzip")])
            return self.send_body(200, payload, extra=extra)
        if path == "/deflate":
            payload = json.dumps({"deflated": True, "filler": "y" * 2000}).encode()
            return self.send_body(200, zlib.compress(payload), extra=[("Content-Encoding", "deflate")])
        if path == "/stall":
            return self.stall()
        if path == "/endless":
            return self.endless(q["id"])
        if path == "/state":
            with states_lock:
                state = stream_states.get(q["id"], "unknown")
            return self.send_body(200, state, content_type="text/plain")
        if path == "/redirect":
            remaining = int(q["n"])
            if remaining > 0:
                self.send_response(302)
                self.send_header("Location", "/redirect?n=%d" % (remaining - 1))
                self.send_header("Content-Length", "0")
                self.send_header("X-Connection-Id", str(self.connection_id))
                self.end_headers()
                return
            return self.send_body(200, "arrived", content_type="text/plain")
        if path == "/big":
            return self.big(int(q["bytes"]), q.get("chunked") == "1")
        if path == "/lines":
            return self.lines(int(q["n"]))
        if path == "/slow":
            time.sleep(int(q["ms"]) / 1000)
            return self.send_body(200, json.dumps({"slow": True}))
        return self.send_body(404, json.dumps({"error": "no route " + path}))

    def items(self, q):
        page = int(q.get("page", "1"))
        pages = int(q.get("pages", "3"))
        size = int(q.get("size", "4"))
        base = "http://127.0.0.1:%d/items?pages=%d&size=%d&page=" % (self.server.server_port, pages, size)
        links = []
        if page < pages:
            links.append('<%s%d>; rel="next"; title="page \\"%d\\""' % (base, page + 1, page + 1))
        if page > 1:
            links.append('<%s%d>; rel="prev"' % (base, page - 1))
        links.append('<%s1>; rel="first start"' % base)
        items = [(page - 1) * size + i for i in range(size)]
        extra = [("Link", ", ".join(links))]
        # A second Link field, as a proxy might add, tests multiple values.
        extra.append(("Link", '<%s%d>; rel=last' % (base, pages)))
        return self.send_body(200, json.dumps({"page": page, "items": items}), extra=extra)

    def stall(self):
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.send_header("X-Connection-Id", str(self.connection_id))
        self.end_headers()
        try:
            self.wfile.write(b"x" * 10)
            self.wfile.flush()
            # Nothing more: the client's timeout must fire. Wait for its disconnect or 30 s.
            self.connection.settimeout(30)
            self.connection.recv(1)
        except OSError:
            pass
        self.close_connection = True

    def endless(self, key):
        self.start_chunked()
        try:
            while True:
                self.chunk("tick\n" * 20)
                set_state(key, "streaming")
                time.sleep(0.02)
        except (BrokenPipeError, ConnectionResetError):
            set_state(key, "disconnected")
        self.close_connection = True

    def big(self, size, chunked):
        block = b"z" * 65536
        if chunked:
            self.start_chunked("application/octet-stream")
        else:
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size))
            self.send_header("X-Connection-Id", str(self.connection_id))
            self.end_headers()
        try:
            remaining = size
            while remaining > 0:
                piece = block[: min(remaining, len(block))]
                if chunked:
                    self.chunk(piece)
                else:
                    self.wfile.write(piece)
                remaining -= len(piece)
            if chunked:
                self.end_chunked()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def lines(self, count):
        self.start_chunked("text/event-stream")
        for i in range(count):
            # Mixed line endings and lines split across chunks.
            self.chunk("data: event %d\r\n" % i)
            self.chunk("\n")
        self.chunk("last line without newline")
        self.end_chunked()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024

    def handle_error(self, request, client_address):
        # Clients that vanish mid-response (cancellation, caps, TLS probes) are part of the scenarios.
        pass


def exit_when_parent_goes():
    # The test process holds our stdin open; EOF means it ended, even if it could not stop us.
    sys.stdin.buffer.read()
    os._exit(0)


def main():
    # A child inherits the signal mask of the thread that spawned it; the tests stop us with SIGTERM.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    threading.Thread(target=exit_when_parent_goes, daemon=True).start()
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
