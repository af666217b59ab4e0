#!/usr/bin/env python3
"""Measures whether the page stays responsive while its inspector follows a session at a given event rate.

Starts the binary on 127.0.0.1 (a journal in a temporary folder), opens the page on a counter session with the
inspector following it, posts increments at --rate events a second (batches of --batch) for --seconds, and reads
back from headless Chromium: the longest task on the page's main thread and the longest gap between frames in
Chromium's performance log (trace events, `devtools.timeline`), the long tasks the page saw itself
(PerformanceObserver `longtask`), and how far the page got. Prints one JSON object; docs/BENCHMARKS.md
has the figures and this command. Not a test: it asserts nothing about time (exit status 1 only when it could not
measure). Stops every process it starts on every path; run it under `timeout`.
"""

import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import Server, run_in_browser, wait_for, wait_text  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

OBSERVE = """
window.benchmark = {longTasks: [], frames: 0, maxGap: 0, last: 0};
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.benchmark.longTasks.push(Math.round(entry.duration));
}).observe({type: "longtask", buffered: false});
const tick = (now) => {
  const b = window.benchmark;
  if (b.last) b.maxGap = Math.max(b.maxGap, now - b.last);
  b.last = now;
  b.frames += 1;
  requestAnimationFrame(tick);
};
requestAnimationFrame(tick);
// The inspector's own work, timed in the page: each update (once a frame at most) and each render of the rows.
window.benchmark.work = {};
const timed = (name, owner, method) => {
  if (typeof owner === "undefined") return;
  const original = owner.prototype[method];
  const stats = window.benchmark.work[name] = {calls: 0, totalMs: 0, maxMs: 0};
  owner.prototype[method] = function (...args) {
    const start = performance.now();
    try { return original.apply(this, args); } finally {
      const ms = performance.now() - start;
      stats.calls += 1; stats.totalMs += ms; stats.maxMs = Math.max(stats.maxMs, ms);
    }
  };
};
if (typeof Inspector !== "undefined") {
  timed("inspector.update", Inspector, "update");
  timed("timeline.render", VirtualList, "render");
}
"""


def chromium(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,900", "--no-first-run", "--disable-extensions", "--user-data-dir=" + profile):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    options.add_experimental_option("perfLoggingPrefs", {
        "enableNetwork": False, "enablePage": False,
        "traceCategories": "devtools.timeline,disabled-by-default-devtools.timeline"})
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(service=Service(executable_path=driver_path, log_output=subprocess.DEVNULL),
                            options=options)


def post_at_rate(port, session, rate, batch, seconds, result):
    """Posts `batch` increments every batch/rate seconds on one keep-alive connection, on an absolute schedule."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = json.dumps({"events": [{"type": "increment"}] * batch})
    interval = batch / rate
    start = time.monotonic()
    sent = 0
    late = 0.0
    while time.monotonic() - start < seconds:
        due = start + (sent // batch) * interval
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        else:
            late = max(late, -wait)
        connection.request("POST", "/v1/sessions/%s/events" % session, body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
        if response.status != 200:
            raise RuntimeError("post answered %d: %s" % (response.status, answer))
        sent += batch
        result["rev"] = answer["rev"]
    result["sent"] = sent
    result["seconds"] = time.monotonic() - start
    result["maxLateMs"] = round(late * 1000, 1)
    connection.close()


def trace_figures(entries):
    """The longest main-thread task and the longest gap between frames, from the performance log's trace events."""
    events = []
    for entry in entries:
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Tracing.dataCollected":
            params = message["params"]
            # ChromeDriver hands the trace over one event a message (or, in some versions, as a list in `value`).
            events.extend(params["value"] if "value" in params else [params])
    starts = [e["ts"] for e in events if e.get("name") == "TimeStamp"
              and e.get("args", {}).get("data", {}).get("message") == "follow-start"]
    if starts:
        events = [e for e in events if e.get("ph") == "M" or e.get("ts", 0) >= starts[0]]
    main_threads = {(e["pid"], e["tid"]) for e in events
                    if e.get("ph") == "M" and e.get("name") == "thread_name"
                    and e.get("args", {}).get("name") == "CrRendererMain"}
    # The page's renderer: the one whose main thread ran the benchmark's frame callback (`tick`).
    page = {(e["pid"], e["tid"]) for e in events if e.get("name") == "FunctionCall"
            and e.get("args", {}).get("data", {}).get("functionName") == "tick"}
    main_threads = (main_threads & page) or main_threads
    on_main = [e for e in events if e.get("ph") == "X" and (e.get("pid"), e.get("tid")) in main_threads]
    runs = [e for e in on_main if e.get("name") == "RunTask"]
    tasks = [e.get("dur", 0) / 1000 for e in runs]
    # What the longest tasks spent their time in: the events directly inside them, by name.
    longest = []
    for task in sorted(runs, key=lambda e: -e.get("dur", 0))[:5]:
        inside = {}
        for e in on_main:
            if e is not task and e["tid"] == task["tid"] and task["ts"] <= e["ts"] < task["ts"] + task["dur"] \
                    and e.get("name") != "RunTask":
                data = e.get("args", {}).get("data", {})
                name = e["name"] + (":" + data["functionName"] if data.get("functionName") else "") + \
                    (":%d elements" % data["elementCount"] if "elementCount" in data else "")
                inside[name] = inside.get(name, 0) + e.get("dur", 0) / 1000
        longest.append({"ms": round(task["dur"] / 1000, 1),
                        "inside": {k: round(v, 1) for k, v in sorted(inside.items(), key=lambda x: -x[1])[:8]}})
    # An `AnimationFrame` (begin `b`, end `e`, one id) spans a frame from its first task to its presentation.
    begun, frames = {}, []
    for e in events:
        if e.get("name") != "AnimationFrame" or e.get("ph") not in ("b", "e"):
            continue
        key = (e.get("pid"), e.get("id", json.dumps(e.get("id2"))))
        if e["ph"] == "b":
            begun[key] = e["ts"]
        elif key in begun:
            frames.append((e["ts"] - begun.pop(key)) / 1000)
    span = (max(e["ts"] for e in runs) - min(e["ts"] for e in runs)) / 1e6 if runs else 0
    return {"traceEvents": len(events), "fromMark": bool(starts), "rendererMainTasks": len(tasks),
            "rendererMainBusyPercent": round(100 * sum(tasks) / 1000 / span, 1) if span else None,
            "longestTaskMs": round(max(tasks), 1) if tasks else None,
            "tasksOver50Ms": sum(1 for t in tasks if t > 50), "tasksOver100Ms": sum(1 for t in tasks if t > 100),
            "animationFrames": len(frames), "longestAnimationFrameMs": round(max(frames), 1) if frames else None,
            "framesOver100Ms": sum(1 for f in frames if f > 100), "longestTasks": longest}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--rate", type=int, default=1000, help="events a second")
    parser.add_argument("--batch", type=int, default=10, help="events a post")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--inspector", default="on", help="on, or off for the page without its inspector")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="feedbackhost-follow-")
    log = open(os.path.join(folder, "server.log"), "wb")
    server = Server(args.binary, log, data_dir=os.path.join(folder, "data"), flags=["--inspector", args.inspector])

    def steps(driver):
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("POST", "/v1/sessions", json.dumps({"system": "counter"}),
                           {"Content-Type": "application/json"})
        session = json.loads(connection.getresponse().read())["id"]
        connection.close()
        driver.get(server.base + "/#" + session)
        wait_text(driver, "connection", "live")
        if args.inspector == "on":
            wait_for(driver, "the inspector", lambda d: d.find_element(By.ID, "inspector").is_displayed())
        driver.execute_script(OBSERVE)
        driver.execute_script("console.timeStamp('follow-start')")  # what came before is not measured
        posted = {}
        poster = threading.Thread(target=post_at_rate,
                                  args=(server.port, session, args.rate, args.batch, args.seconds, posted))
        poster.start()
        samples = []
        while poster.is_alive():
            time.sleep(1)
            shown = driver.execute_script("return Number(document.getElementById(arguments[0]).textContent)",
                                          "inspector-state-rev" if args.inspector == "on" else "session-rev")
            samples.append({"posted": posted.get("rev", 0), "inspector": shown})
        poster.join()
        final = posted.get("rev")
        if final is None:
            sys.exit("the posting thread failed (see above)")
        wait_for(driver, "the page at the last revision", lambda d: d.find_element(By.ID, "session-rev").text
                 == str(final) and (args.inspector != "on"
                                    or d.find_element(By.ID, "inspector-state-rev").text == str(final)))
        page = driver.execute_script("return window.benchmark")
        rows = len(driver.find_elements(By.CSS_SELECTOR, "#timeline .virtual-row"))
        figures = trace_figures(driver.get_log("performance"))
        lag = [sample["posted"] - sample["inspector"] for sample in samples]
        print(json.dumps({
            "inspector": args.inspector, "rate": args.rate, "batch": args.batch, "postedEvents": posted["sent"],
            "postedPerSecond": round(posted["sent"] / posted["seconds"]), "posterMaxLateMs": posted["maxLateMs"],
            "finalRev": final, "timelineRowsInPage": rows, "samplesEachSecond": samples,
            "maxLagEvents": max(lag) if lag else None,
            "trace": figures,
            "page": {"longTasksMs": page["longTasks"], "frames": page["frames"],
                     "work": {name: {"calls": w["calls"], "meanMs": round(w["totalMs"] / max(1, w["calls"]), 2),
                                     "maxMs": round(w["maxMs"], 1)} for name, w in page["work"].items()},
                     "longestFrameGapMs": round(page["maxGap"], 1)},
        }, indent=1))
    run_in_browser(server, folder, steps, os.path.join(tempfile.gettempdir(), "follow-benchmark-failure.png"),
                   make_browser=chromium, check_answers=False)


if __name__ == "__main__":
    main()
