#!/usr/bin/env python3
"""The inspector in the web page (issue 32) in a real browser: headless Chromium driven by selenium.

Starts the binary on 127.0.0.1 port 0 with a journal in a temporary folder, every event kept, the inspector on and a
manual clock, and checks that: a traffic light's timeline shows its client event and its timer events as effects
(with the feedback that sent them); scrubbing to a revision shows that revision's phase, with what it changed
marked; the diff between two revisions is the phase's change; a fork at the selected revision appears in the list of
sessions, opens at that revision's state with its effects paused, and its timer fires once they are resumed; the
list filters by system; the timeline of a 100,000-event session keeps a few dozen rows in the page and shows the
entries of wherever it is scrolled to. Then, on a server started with `--inspector off`, that the page hides the
inspector and still runs a session.

Exit status 0 when every check passed; prints one line per check. Stops every process it starts (the servers,
chromedriver and Chromium) on every path; run it under `timeout` so a hang ends too.
"""

import argparse
import http.client
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import (  # noqa: E402
    Server,
    check,
    check_answer_bodies,
    counter_at_one,
    run_in_browser,
    text_of,
    wait_for,
    wait_text,
)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


def call(server, method, path, body=None):
    """One request to the server (Python's own HTTP client, not the page's); the answer's status and JSON."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        connection.request(method, path, None if body is None else json.dumps(body), headers)
        response = connection.getresponse()
        data = response.read()
        return response.status, (json.loads(data) if data else None)
    finally:
        connection.close()


def advance(server, milliseconds):
    status, answer = call(server, "POST", "/v1/clock/advance", {"milliseconds": milliseconds})
    assert status == 200 and answer["settled"], (status, answer)


def row(driver, rev):
    rows = driver.find_elements(By.CSS_SELECTOR, '#timeline .virtual-row[data-rev="%d"]' % rev)
    return rows[0] if rows and rows[0].is_displayed() else None


def displayed_revs(driver):
    return sorted(int(r.get_attribute("data-rev")) for r in driver.find_elements(
        By.CSS_SELECTOR, "#timeline .virtual-row") if r.is_displayed())


def state_value(driver, pointer):
    """The value the state tree shows at `pointer` (as JSON text), or None."""
    nodes = driver.find_elements(By.CSS_SELECTOR, '#inspector-state [data-pointer="%s"] > .value' % pointer)
    return nodes[0].text if nodes else None


def scrub_to(driver, rev):
    """Moves the scrubber with the keyboard, as a person does once it has the focus."""
    scrubber = driver.find_element(By.ID, "inspector-scrubber")
    driver.execute_script("arguments[0].focus()", scrubber)
    value = int(scrubber.get_attribute("value"))
    key = Keys.ARROW_LEFT if rev < value else Keys.ARROW_RIGHT
    scrubber.send_keys(*([key] * abs(rev - value)))
    wait_for(driver, "rev %d shown" % rev, lambda d: d.find_element(By.ID, "inspector-state")
             .get_attribute("data-rev") == str(rev) and text_of(d, "inspector-state-rev") == str(rev))


def traffic_light(driver, server):
    driver.get(server.base + "/")
    wait_for(driver, "the system list", lambda d: d.find_elements(By.ID, "start-traffic-light"))
    driver.find_element(By.ID, "start-traffic-light").click()
    wait_text(driver, "connection", "live")
    wait_for(driver, "the inspector", lambda d: d.find_element(By.ID, "inspector").is_displayed())
    driver.find_element(By.ID, "light-start").click()
    wait_for(driver, "the light to run", lambda d: "running" in text_of(d, "light-phase"))
    advance(server, 0)      # the first deadline is scheduled (rev 2)
    for milliseconds in (4000, 3000, 1000):
        advance(server, milliseconds)  # red → green (3), green → yellow (4), yellow → red (5)
    wait_for(driver, "rev 5 in the timeline", lambda d: row(d, 5) and "origin-effect" in row(d, 5)
             .get_attribute("class"))
    start = row(driver, 1)
    assert "origin-client" in start.get_attribute("class"), start.get_attribute("class")
    assert "client" in start.text and "start" in start.text, start.text
    for rev, event in ((2, "schedule"), (3, "advance"), (4, "advance"), (5, "advance")):
        line = row(driver, rev)
        badges = [b.text for b in line.find_elements(By.CSS_SELECTOR, ".badge")]
        assert "origin-effect" in line.get_attribute("class") and badges[0] == "effect", (rev, line.text)
        assert len(badges) == 2 and badges[1].startswith("feedback"), (rev, badges)
        assert event in line.text, (rev, line.text)
    check("the traffic light's timeline: rev 1 `start` is the client's, revs 2-5 are its timers' effects (%s)"
          % ", ".join(b.text for b in row(driver, 3).find_elements(By.CSS_SELECTOR, ".badge")))

    wait_for(driver, "following the head", lambda d: text_of(d, "inspector-state-rev") == "5")
    assert driver.find_element(By.ID, "inspector-state").get_attribute("data-source") == "live"
    scrub_to(driver, 3)
    wait_for(driver, "green at rev 3", lambda d: state_value(d, "/phase") == '"green"')
    phase = driver.find_element(By.CSS_SELECTOR, '#inspector-state [data-pointer="/phase"]')
    assert "changed" in phase.get_attribute("class"), phase.get_attribute("class")
    assert driver.find_element(By.ID, "inspector-state").get_attribute("data-source") == "history"
    assert "selected" in row(driver, 3).get_attribute("class")
    scrub_to(driver, 4)
    wait_for(driver, "yellow at rev 4", lambda d: state_value(d, "/phase") == '"yellow"')
    scrub_to(driver, 1)
    wait_for(driver, "red at rev 1", lambda d: state_value(d, "/phase") == '"red"')
    assert "changed" in driver.find_element(By.CSS_SELECTOR, '#inspector-state [data-pointer="/running"]') \
        .get_attribute("class")
    check("scrubbing to revs 3, 4 and 1 shows green, yellow and red, with what each revision changed marked")

    driver.find_element(By.CSS_SELECTOR, "#inspector-diff-panel summary").click()
    for field, value in (("diff-from", "2"), ("diff-to", "4")):
        box = driver.find_element(By.ID, field)
        box.clear()
        box.send_keys(value)
    driver.find_element(By.CSS_SELECTOR, "#inspector-diff button").click()
    wait_for(driver, "the diff", lambda d: "/phase" in text_of(d, "diff-ops"))
    assert '"yellow"' in text_of(driver, "diff-ops"), text_of(driver, "diff-ops")
    check("the diff from rev 2 to rev 4: " + text_of(driver, "diff-ops").replace("\n", "; "))
    return driver.current_url.split("#", 1)[1]


def fork(driver, server, origin):
    driver.find_element(By.CSS_SELECTOR, '#timeline .virtual-row[data-rev="3"]').click()
    wait_for(driver, "rev 3 selected", lambda d: text_of(d, "inspector-fork") == "Fork at rev 3")
    driver.find_element(By.ID, "inspector-fork").click()
    wait_for(driver, "the fork's notice", lambda d: d.find_elements(By.ID, "inspector-open-fork"))
    forked = driver.find_element(By.CSS_SELECTOR, "#inspector-notice code").text
    wait_for(driver, "the fork in the list", lambda d: d.find_elements(
        By.CSS_SELECTOR, '#sessions-list tr[data-id="%s"]' % forked))
    line = driver.find_element(By.CSS_SELECTOR, '#sessions-list tr[data-id="%s"]' % forked)
    assert "fork of" in line.text and "traffic-light" in line.text, line.text
    check("a fork at rev 3 appears in the list of sessions: " + line.text.replace("\n", " "))

    driver.find_element(By.ID, "inspector-open-fork").click()
    wait_for(driver, "the fork open", lambda d: text_of(d, "session-id") == forked)
    wait_text(driver, "connection", "live")
    wait_for(driver, "green in the fork", lambda d: text_of(d, "light-phase").startswith("green"))
    assert driver.find_element(By.ID, "inspector-resume").is_displayed()
    advance(server, 5000)
    assert text_of(driver, "light-phase").startswith("green"), "a paused fork's timer fired"
    driver.find_element(By.ID, "inspector-resume").click()
    wait_for(driver, "effects resumed", lambda d: "resumed" in text_of(d, "inspector-notice"))
    advance(server, 0)  # green's deadline passed while the fork was paused: it fires once resumed
    wait_for(driver, "the fork's timer", lambda d: text_of(d, "light-phase").startswith("yellow"))
    wait_for(driver, "the fork's own timeline", lambda d: displayed_revs(d) == [0, 1] and "advance" in row(d, 1).text)
    check("the fork opens green with its effects paused (5 s on the clock fire nothing); resumed, it turns yellow, "
          "and its timeline is its own: the initial state and that advance")

    status = driver.find_element(By.ID, "sessions-status")
    status.find_element(By.CSS_SELECTOR, 'option[value="active"]').click()
    system = driver.find_element(By.ID, "sessions-system")
    system.find_element(By.CSS_SELECTOR, 'option[value="counter"]').click()
    wait_for(driver, "an empty counter list", lambda d: d.find_element(By.ID, "sessions-empty").is_displayed())
    system.find_element(By.CSS_SELECTOR, 'option[value="traffic-light"]').click()
    wait_for(driver, "both lights", lambda d: {r.get_attribute("data-id") for r in d.find_elements(
        By.CSS_SELECTOR, "#sessions-list tr")} == {origin, forked})
    check("the list filtered by system and status: " + text_of(driver, "sessions-counts"))


def long_history(driver, server, count):
    status, created = call(server, "POST", "/v1/sessions", {"system": "counter"})
    assert status == 201, created
    session = created["id"]
    for _ in range(count // 100):
        status, answer = call(server, "POST", "/v1/sessions/%s/events" % session,
                              {"events": [{"type": "increment"}] * 100})
        assert status == 200, answer
    driver.get(server.base + "/#" + session)
    wait_for(driver, "the head", lambda d: text_of(d, "inspector-state-rev") == str(count))
    wait_for(driver, "the last row", lambda d: row(d, count) and "increment" in row(d, count).text)
    rows = len(driver.find_elements(By.CSS_SELECTOR, "#timeline .virtual-row"))
    assert rows < 80, "%d rows in the page for %d events" % (rows, count)
    timeline = driver.find_element(By.ID, "timeline")
    driver.execute_script("arguments[0].scrollTop = arguments[0].scrollHeight / 2", timeline)
    middle = count // 2
    wait_for(driver, "entries in the middle", lambda d: any(
        "increment" in r.text and abs(int(r.get_attribute("data-rev")) - middle) < 200
        for r in d.find_elements(By.CSS_SELECTOR, "#timeline .virtual-row.origin-client")))
    shown = displayed_revs(driver)
    driver.find_element(By.CSS_SELECTOR, '#timeline .virtual-row[data-rev="%d"]' % shown[len(shown) // 2]).click()
    rev = shown[len(shown) // 2]
    try:
        wait_for(driver, "the count at rev %d" % rev, lambda d: state_value(d, "/count") == str(rev))
    except AssertionError:
        print("the state panel and the states asked for:", driver.execute_script("""
          const s = document.getElementById('inspector-state');
          return [s.dataset.rev, s.dataset.source, document.getElementById('inspector-state-rev').textContent,
            document.getElementById('inspector-error').textContent, s.textContent.slice(0, 100),
            performance.getEntriesByType('resource').filter((e) => e.name.includes('/states/'))
              .map((e) => [e.name.slice(-20), Math.round(e.startTime), Math.round(e.duration)]),
            Math.round(performance.now())]"""))
        raise
    check("a %d-event timeline keeps %d rows in the page; scrolled to the middle it shows revs %d-%d, and rev %d's "
          "count" % (count, rows, shown[0], shown[-1], rev))


def console_errors(driver):
    severe = [entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
    assert not severe, "console errors: %s" % severe
    check("no errors in the browser console")


def inspector_off(driver, binary, log):
    server = Server(binary, log, flags=["--inspector", "off"]).start()
    try:
        counter_at_one(driver, server.base)
        assert not driver.find_element(By.ID, "inspector").is_displayed()
        assert not driver.find_element(By.ID, "sessions").is_displayed()
        check("with --inspector off the page hides the inspector and the list, and runs a counter")
    finally:
        server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--screenshots", default=".build")
    parser.add_argument("--events", type=int, default=100000, help="events of the long session")
    args = parser.parse_args()
    os.makedirs(args.screenshots, exist_ok=True)
    folder = tempfile.mkdtemp(prefix="feedbackhost-inspector-")
    log = open(os.path.join(args.screenshots, "inspector-test-server.log"), "wb")
    server = Server(args.binary, log, data_dir=os.path.join(folder, "data"), flags=[
        "--inspector", "on", "--clock", "manual", "--history-retention", "forever", "--fsync", "interval:50"])

    def steps(driver):
        # The answers are checked after each step: a page that is left takes its answers' bodies with it.
        origin = traffic_light(driver, server)
        check(check_answer_bodies(driver))
        fork(driver, server, origin)
        check(check_answer_bodies(driver))
        driver.save_screenshot(os.path.join(args.screenshots, "inspector-test.png"))
        long_history(driver, server, args.events)
        console_errors(driver)
        inspector_off(driver, args.binary, log)

    run_in_browser(server, folder, steps, os.path.join(args.screenshots, "inspector-test-failure.png"))
    print("inspector browser test passed", flush=True)


if __name__ == "__main__":
    main()
