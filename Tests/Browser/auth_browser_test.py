#!/usr/bin/env python3
"""client.js with `--auth jwt` in a real browser: headless Chromium driven by selenium against the feedback-host binary.

Starts the binary on 127.0.0.1 port 0 with tokens required (open creation, a server key, a backend HS256 secret),
and checks from the page's own client.js that: creating answers with the session's tokens; a stream opened with a
token function follows the session; when the stream's token expires (`event: reauth`) the client asks for a new
token and resumes from its cursor; a session opened without a token ends as unauthorized.

Exit status 0 when every check passed; prints one line per check. Stops every process it starts on every path;
run it under `timeout` so a hang ends too.
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import WAIT, Server, browser, check, check_answer_bodies  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

SECRET = b"a-backend-secret-for-the-browser-test-of-tokens"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256(claims):
    """A backend's token: HS256 with the secret the server was given (kid: the key file's name)."""
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "hs"}).encode())
    payload = b64url(json.dumps(claims).encode())
    signature = hmac.new(SECRET, (header + "." + payload).encode(), hashlib.sha256).digest()
    return header + "." + payload + "." + b64url(signature)


class AuthServer(Server):
    """The server with tokens required: open creation, a server key and the backend's HS256 secret, in `folder`."""

    def __init__(self, binary, log, folder):
        super().__init__(binary, log, flags=[
            "--auth", "jwt", "--auth-create", "open",
            "--auth-key-file", os.path.join(folder, "server.key"),
            "--auth-keys", os.path.join(folder, "hs.key")])
        self.folder = folder

    def start(self, port=0):
        with open(os.path.join(self.folder, "server.key"), "wb") as f:
            f.write(os.urandom(32))
        with open(os.path.join(self.folder, "hs.key"), "wb") as f:
            f.write(SECRET)
        return super().start(port)


def until(driver, what, script):
    try:
        return WebDriverWait(driver, WAIT, poll_frequency=0.05).until(lambda d: d.execute_script(script))
    except Exception as error:
        log = driver.execute_script("return JSON.stringify(window.authLog || [])")
        raise AssertionError("timed out waiting for %s; client log: %s" % (what, log)) from error


def page(driver, server):
    """The web page itself with tokens on: it keeps the tokens its creation answered, and its viewer link reads."""
    from selenium.webdriver.common.by import By
    driver.get(server.base + "/")
    until(driver, "the system list", "return !!document.getElementById('start-counter')")
    driver.find_element(By.ID, "start-counter").click()
    until(driver, "live at 0", "return document.getElementById('connection').textContent === 'live'"
          " && (document.getElementById('counter-value') || {}).textContent === '0'")
    driver.find_element(By.ID, "counter-increment").click()
    until(driver, "count 1", "return document.getElementById('counter-value').textContent === '1'")
    check("the page starts a session with tokens on, watches it and posts to it with the tokens it was given")
    link = driver.execute_script("return document.getElementById('viewer-link').href")
    assert "&token=" in link, link
    driver.execute_script("sessionStorage.clear()")
    driver.get(server.base + "/")
    driver.get(link)
    until(driver, "the viewer at 1", "return document.getElementById('connection').textContent === 'live'"
          " && (document.getElementById('counter-value') || {}).textContent === '1'")
    driver.find_element(By.ID, "counter-increment").click()
    until(driver, "the refusal shown", "return document.getElementById('error').textContent.includes('needs post')")
    check("its read-only link shows the session to a viewer, whose post is refused (403, shown)")


def run(driver, server):
    page(driver, server)
    driver.get(server.base + "/")
    until(driver, "client.js", "return typeof FeedbackHost === 'object'")
    created = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        FeedbackHost.create("counter").then(done, (e) => done({error: String(e)}));
    """)
    assert set(created.get("tokens", {})) == {"read", "post", "admin"}, created
    check("creating a session answers with its read, post and admin tokens")

    session = created["id"]
    now = int(time.time())
    tokens = [hs256({"sid": session, "scope": "read", "exp": now + 2}),
              hs256({"sid": session, "scope": "read", "exp": now + 120})]
    driver.execute_script("""
        const [id, tokens, post] = arguments;
        window.authLog = [];
        window.tokenRequests = 0;
        window.count = null;
        window.postToken = post;
        window.watched = FeedbackHost.open(id, {
          token: async () => { window.tokenRequests += 1; return tokens.shift(); },
          onState: (state) => { window.count = state.count; window.authLog.push("state " + state.count); },
          onStatus: (status) => window.authLog.push("status " + status),
          onEnded: (reason) => window.authLog.push("ended " + reason),
          onError: (error) => window.authLog.push("error " + error.message),
        });
    """, session, tokens, created["tokens"]["post"])
    until(driver, "the first state", "return window.count === 0 && window.watched.status === 'live'")
    driver.execute_script("window.watched.token = window.postToken; window.watched.send({type: 'increment'})")
    until(driver, "count 1", "return window.count === 1")
    check("a stream opened with a token follows the session")

    until(driver, "a second token after reauth", "return window.tokenRequests === 2")
    until(driver, "live again", "return window.watched.status === 'live'")
    driver.execute_script("""
        fetch("/v1/sessions/" + arguments[0] + "/events", {method: "POST",
          headers: {"Content-Type": "application/json", "Authorization": "Bearer " + window.postToken},
          body: JSON.stringify({type: "increment"})});
    """, session)
    until(driver, "count 2 after the reconnect", "return window.count === 2")
    log = driver.execute_script("return window.authLog")
    assert "ended token-expired" not in log, log
    check("at the token's expiry (reauth) the client takes a new token and resumes")

    driver.execute_script("""
        window.anonymous = null;
        FeedbackHost.open(arguments[0], {onEnded: (reason) => { window.anonymous = reason; }});
    """, session)
    until(driver, "the tokenless stream to end", "return window.anonymous === 'unauthorized'")
    check("a stream opened without a token ends as unauthorized")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        log = open(os.path.join(folder, "server.log"), "w")
        server = AuthServer(args.binary, log, folder).start()
        driver = None
        try:
            driver = browser(os.path.join(folder, "profile"))
            run(driver, server)
            check(check_answer_bodies(driver))
        finally:
            if driver:
                driver.quit()
            server.stop()
            log.close()
            with open(os.path.join(folder, "server.log")) as f:
                text = f.read()
            if SECRET.decode() in text:
                sys.exit("the server's log holds the backend secret")
    print("auth browser test passed", flush=True)


if __name__ == "__main__":
    main()
