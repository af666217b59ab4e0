#!/usr/bin/env python3
"""The web page in a real browser: headless Chromium driven by selenium against the feedback-host binary.

Starts the binary on 127.0.0.1 port 0, opens the page, and checks that a person can run a counter (clicks reach
the server and the count comes back over SSE), that errors are shown, that client.js re-syncs after a gap, that
server-side timers reach the page, that the infinite list searches the demo catalog and loads a second page on
scroll, and that a stream dropped by the page or by a server restart resumes. Saves screenshots under
--screenshots.

Exit status 0 when every check passed; prints one line per check. Stops every process it starts (the server,
chromedriver and Chromium) on every path; run it under `timeout` so a hang ends too.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:
    sys.exit("selenium is missing: `make deps` installs it (python3 -m pip install selenium)")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ConformanceChecks"))
import answer_words  # noqa: E402

WAIT = 15


class Server:
    """The binary on 127.0.0.1; `start` reads the port from its first line of output."""

    def __init__(self, binary, log, flags=(), data_dir="none"):
        """`flags`: more of the binary's options; `data_dir`: the journal's folder (none: no journal)."""
        self.binary, self.log, self.flags, self.process, self.port = binary, log, list(flags), None, 0
        self.data_dir = data_dir

    def start(self, port=0):
        self.process = subprocess.Popen(
            [self.binary, "--host", "127.0.0.1", "--port", str(port), "--data-dir", self.data_dir, *self.flags],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.log)
        line = self.process.stdout.readline().decode().strip()
        prefix = "listening on http://127.0.0.1:"
        if not line.startswith(prefix):
            self.stop()
            raise RuntimeError("unexpected first line from the server: %r" % line)
        self.port = int(line[len(prefix):])
        return self

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.port


def browser(profile, flags=()):
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,900", "--no-first-run", "--disable-extensions",
                 "--user-data-dir=" + profile, *flags):
        options.add_argument(flag)
    # "performance": Chromium's network events, so that every JSON answer the page read is checked afterwards
    # (`check_answer_bodies`).
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    service = Service(executable_path=driver_path, log_output=subprocess.DEVNULL)
    return webdriver.Chrome(service=service, options=options)


def check_answer_bodies(driver):
    """Checks every JSON answer the page has read since the last call (from Chromium's network log, which `browser`
    turns on) for our Swift type names (Tests/ConformanceChecks/answer_words.py); says how many it checked. An
    answer whose body Chromium no longer holds is passed over (and counted)."""
    checked = missed = 0
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"]).get("message", {})
        if message.get("method") != "Network.responseReceived":
            continue
        response = message["params"]["response"]
        if "json" not in response.get("mimeType", ""):
            continue
        try:
            body = driver.execute_cdp_cmd("Network.getResponseBody", {"requestId": message["params"]["requestId"]})
        except Exception:
            missed += 1  # no longer held (a page left, a server restarted)
            continue
        answer_words.check(body.get("body", ""), response.get("mimeType"))
        checked += 1
    return "%d JSON answers the page read name none of our types (%d no longer held)" % (checked, missed)


def run_in_browser(server, folder, steps, failure_screenshot, make_browser=browser, check_answers=True):
    """Starts `server` and Chromium (`make_browser` with a profile in the temporary `folder`) and returns
    `steps(driver)`, then (`check_answers`) checks every JSON answer the page read for our type names. On a failure
    saves `failure_screenshot` and prints the browser console. On every path stops Chromium and the server, closes
    the server's log and removes `folder`."""
    driver = None
    try:
        server.start()
        driver = make_browser(os.path.join(folder, "profile"))
        result = steps(driver)
        if check_answers:
            check(check_answer_bodies(driver))
        return result
    except BaseException:
        if driver:
            driver.save_screenshot(failure_screenshot)
            try:
                print("browser console: %s" % driver.get_log("browser"), flush=True)
            except Exception:
                pass
        raise
    finally:
        if driver:
            driver.quit()
        server.stop()
        server.log.close()
        shutil.rmtree(folder, ignore_errors=True)


def check(name):
    print("ok  " + name, flush=True)


def text_of(driver, element_id):
    return driver.find_element(By.ID, element_id).text


def wait_for(driver, what, condition):
    # An element the page redraws between its lookup and a read of it is stale: the condition is asked again (the
    # inspector's state tree is redrawn as its answer arrives; a stale read failed the wait at once).
    try:
        return WebDriverWait(driver, WAIT, poll_frequency=0.05,
                             ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)) \
            .until(lambda d: condition(d))
    except Exception as error:
        raise AssertionError("timed out waiting for %s (badge: %r)" % (what, safe_text(driver, "connection"))) \
            from error


def safe_text(driver, element_id):
    try:
        return text_of(driver, element_id)
    except Exception:
        return None


def wait_text(driver, element_id, expected):
    wait_for(driver, "#%s to read %r" % (element_id, expected), lambda d: text_of(d, element_id) == expected)


def counter(driver, server):
    driver.get(server.base + "/")
    wait_for(driver, "the system list", lambda d: d.find_elements(By.ID, "start-counter"))
    driver.find_element(By.ID, "start-counter").click()
    wait_text(driver, "connection", "live")
    wait_text(driver, "counter-value", "0")
    check("the page lists the systems, starts a counter session and goes live")

    for _ in range(3):
        driver.find_element(By.ID, "counter-increment").click()
    wait_text(driver, "counter-value", "3")
    amount = driver.find_element(By.ID, "counter-amount")
    amount.clear()
    amount.send_keys("5")
    driver.find_element(By.CSS_SELECTOR, "#counter-add button").click()
    wait_text(driver, "counter-value", "8")
    driver.find_element(By.ID, "example-0").click()  # the first example event, "increment"
    wait_text(driver, "counter-value", "9")
    wait_text(driver, "session-rev", "5")
    check("clicks post events and the count comes back over SSE (9 at rev 5)")

    field = driver.find_element(By.ID, "event-json")
    field.clear()
    field.send_keys('{"type":"multiply"}')
    driver.find_element(By.CSS_SELECTOR, "#custom-event button").click()
    wait_for(driver, "the problem shown", lambda d: "multiply" in text_of(d, "error"))
    check("a refused event shows the server's problem detail: " + text_of(driver, "error"))

    # The event form is built from the published schema: "add" gets a number field "amount" that writes the JSON.
    Select(driver.find_element(By.ID, "event-type")).select_by_value("add")
    for amount, count in (("2", "11"), ("-2", "9")):
        field = driver.find_element(By.ID, "event-field-amount")
        assert field.get_attribute("type") == "number", field.get_attribute("type")
        field.clear()
        field.send_keys(amount)
        json_text = driver.find_element(By.ID, "event-json").get_attribute("value")
        assert json_text == '{"type":"add","amount":%s}' % amount, json_text
        driver.find_element(By.CSS_SELECTOR, "#custom-event button").click()
        wait_text(driver, "counter-value", count)
    check("the event form built from the counter's event schema posts add 2, then add -2")

    driver.find_element(By.ID, "reconnect").click()
    wait_text(driver, "connection", "live")
    driver.find_element(By.ID, "counter-decrement").click()
    wait_text(driver, "counter-value", "8")
    check("after the page drops its stream and opens a new one, changes arrive again")
    return driver.current_url.split("#", 1)[1]


GAP_SCRIPT = """
const [id, done] = [arguments[0], arguments[arguments.length - 1]];
const errors = [];
let bumped = false;
const s = FeedbackHost.open(id, {
  onError: (e) => errors.push(String(e.message)),
  onState: (state, rev) => {
    if (!bumped) {
      bumped = true;
      s.rev = rev - 1;  // pretend a patch was missed: the next patch's base no longer matches
      s.send({type: "increment"});
    } else if (errors.length) {
      s.close();
      done({count: state.count, rev, errors});
    }
  },
});
setTimeout(() => done({timeout: true, errors}), 10000);
"""

SELECT_SCRIPT = """
const [id, done] = [arguments[0], arguments[arguments.length - 1]];
let sent = false;
const s = FeedbackHost.open(id, {
  select: ["/count"],
  onState: (state) => {
    if (!sent) {
      sent = true;
      s.send({type: "increment"});
    } else {
      s.close();
      done(state);
    }
  },
});
setTimeout(() => done({timeout: true}), 10000);
"""

PATCH_SCRIPT = """
const doc = {a: 1, list: [1, 2], o: {"x/y": 1, "t~": 2}};
const out = FeedbackHost.applyPatch(doc, [
  {op: "add", path: "/list/-", value: 3}, {op: "replace", path: "/a", value: 5},
  {op: "remove", path: "/o/x~1y"}, {op: "move", from: "/o/t~0", path: "/m"},
  {op: "copy", from: "/list", path: "/c"}, {op: "test", path: "/a", value: 5}]);
let refused = 0;
for (const ops of [[{op: "replace", path: "/b", value: 1}], [{op: "test", path: "/a", value: 6}],
                   [{op: "add", path: "/list/9", value: 1}]]) {
  try { FeedbackHost.applyPatch({a: 1, list: []}, ops); } catch (e) { refused += 1; }
}
return {out, refused};
"""


def client_library(driver, session_id):
    result = driver.execute_script(PATCH_SCRIPT)
    expected = {"a": 5, "list": [1, 2, 3], "o": {}, "m": 2, "c": [1, 2, 3]}
    assert result == {"out": expected, "refused": 3}, result
    check("client.js applies RFC 6902 patches and refuses ones that do not apply")

    driver.set_script_timeout(WAIT)
    result = driver.execute_async_script(GAP_SCRIPT, session_id)
    assert not result.get("timeout"), result
    assert result["count"] == 9, result
    assert any("gap" in e for e in result["errors"]), result
    check("client.js notices a gap (base != rev), re-syncs from a snapshot: count %d at rev %d"
          % (result["count"], result["rev"]))

    result = driver.execute_async_script(SELECT_SCRIPT, session_id)
    assert result == {"/count": 10}, result
    check("client.js with select=/count keeps {\"/count\": value} up to date through patches")


def timers(driver, server):
    """Play Catch and the traffic light: states that change on the server's own timers reach the page."""
    driver.find_element(By.ID, "start-catch").click()
    wait_for(driver, "the catch view", lambda d: d.find_elements(By.ID, "catch-throw"))
    wait_text(driver, "connection", "live")
    driver.find_element(By.ID, "catch-throw").click()
    wait_text(driver, "catch-count", "2")  # the machine throws back after a second, through its feedback
    assert driver.find_element(By.ID, "catch-throw").is_enabled()
    check("Play Catch: the machine's throw back arrives over SSE")
    driver.find_element(By.ID, "start-traffic-light").click()
    wait_for(driver, "the traffic light view", lambda d: d.find_elements(By.ID, "light-start"))
    wait_text(driver, "connection", "live")
    driver.find_element(By.ID, "light-start").click()
    wait_for(driver, "the light to run", lambda d: "running" in text_of(d, "light-phase"))
    driver.find_element(By.ID, "light-stop").click()
    wait_for(driver, "the light to stop", lambda d: text_of(d, "light-phase").endswith("(stopped)"))
    check("the traffic light starts and stops")


def paging(driver, server, screenshots):
    driver.get(server.base + "/")
    wait_for(driver, "the paging system", lambda d: d.find_elements(By.ID, "start-paging"))
    driver.find_element(By.ID, "start-paging").click()
    wait_text(driver, "connection", "live")
    driver.find_element(By.ID, "paging-query").send_keys("lamp")
    items = lambda d: d.find_elements(By.CSS_SELECTOR, "#paging-list li:not(.sentinel)")
    wait_for(driver, "a first page", lambda d: len(items(d)) > 0)
    wait_for(driver, "the fetch to settle", lambda d: "loading" not in text_of(d, "paging-status"))
    first = len(items(driver))
    pages = driver.find_element(By.ID, "paging-status").get_attribute("data-pages")
    assert pages == "1", "a first page that fills the list loads alone, not %s pages" % pages
    check("typing a query sends a debounced search and the first page arrives: " + text_of(driver, "paging-status"))

    listing = driver.find_element(By.ID, "paging-list")
    driver.execute_script("arguments[0].scrollTop = arguments[0].scrollHeight", listing)
    wait_for(driver, "a second page", lambda d: len(items(d)) > first)
    wait_for(driver, "page 2", lambda d: d.find_element(By.ID, "paging-status").get_attribute("data-pages") == "2")
    wait_for(driver, "the fetch to settle", lambda d: "loading" not in text_of(d, "paging-status"))
    check("scrolling to the end loads the next page: " + text_of(driver, "paging-status"))
    driver.save_screenshot(os.path.join(screenshots, "browser-test.png"))


def inspection_refused(message):
    """The inspector asking for a session's history on this server, which keeps no journal: 409, once."""
    return "status of 409" in message and "/history?" in message


def console_errors(driver):
    # The expected errors: the 422 of the refused event above, and the inspector's 409 (no journal, no history).
    severe = [entry for entry in driver.get_log("browser")
              if entry.get("level") == "SEVERE" and "status of 422" not in entry.get("message", "")
              and not inspection_refused(entry.get("message", ""))]
    assert not severe, "console errors: %s" % severe
    check("no other errors in the browser console (CSP violations would show here)")
    assert not driver.find_element(By.ID, "inspector").is_displayed()
    paging_row = driver.find_elements(By.CSS_SELECTOR, '#sessions-list tr[data-id="%s"]'
                                      % driver.current_url.split("#", 1)[1])
    assert paging_row and "paging" in paging_row[0].text, "the list shows the sessions in memory"
    check("without a journal the page hides the inspector (no history) and lists the sessions in memory")


def counter_at_one(driver, base):
    """Opens the page at `base`, starts a counter from it and increments it once, waiting for each step."""
    driver.get(base + "/")
    wait_for(driver, "the system list", lambda d: d.find_elements(By.ID, "start-counter"))
    driver.find_element(By.ID, "start-counter").click()
    wait_text(driver, "connection", "live")
    driver.find_element(By.ID, "counter-increment").click()
    wait_text(driver, "counter-value", "1")


def restart(driver, server, screenshots):
    counter_at_one(driver, server.base)
    port = server.port
    server.stop()
    wait_for(driver, "the page to notice", lambda d: text_of(d, "connection") == "reconnecting…")
    check("the page shows reconnecting while the server is down")
    server.start(port)
    wait_text(driver, "connection", "live")
    before = int(text_of(driver, "counter-value"))
    driver.find_element(By.ID, "counter-increment").click()
    wait_text(driver, "counter-value", str(before + 1))
    check("after the server restarted the page resumed (notice: %r)" % text_of(driver, "notice"))
    driver.save_screenshot(os.path.join(screenshots, "browser-test-restart.png"))

    # Another client deletes the session: the stream says `ended` and the page stops reconnecting.
    session_id = driver.current_url.split("#", 1)[1]
    driver.execute_script("fetch('/v1/sessions/' + arguments[0], {method: 'DELETE'})", session_id)
    wait_text(driver, "connection", "ended")
    wait_for(driver, "the ended notice", lambda d: "deleted" in text_of(d, "notice"))
    check("a session deleted elsewhere ends on the page: " + text_of(driver, "notice"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--screenshots", default=".build")
    args = parser.parse_args()
    os.makedirs(args.screenshots, exist_ok=True)
    folder = tempfile.mkdtemp(prefix="feedbackhost-chromium-")
    log = open(os.path.join(args.screenshots, "browser-test-server.log"), "wb")
    server = Server(args.binary, log)

    def steps(driver):
        # The answers are checked after each step: a page that is left takes its answers' bodies with it.
        session_id = counter(driver, server)
        check(check_answer_bodies(driver))
        client_library(driver, session_id)
        check(check_answer_bodies(driver))
        timers(driver, server)
        check(check_answer_bodies(driver))
        paging(driver, server, args.screenshots)
        check(check_answer_bodies(driver))
        console_errors(driver)
        restart(driver, server, args.screenshots)

    run_in_browser(server, folder, steps, os.path.join(args.screenshots, "browser-test-failure.png"))
    print("browser test passed", flush=True)


if __name__ == "__main__":
    main()
