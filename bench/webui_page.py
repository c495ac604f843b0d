#!/usr/bin/env python3
"""Drives DevProxy's web UI in headless Chromium (Playwright, the system browser) for bench/webui.

usage: webui_page.py follow URL STOP
                                  open the page, wait until it says "live", print "ready", keep it open
                                  (following the live list) until the file STOP exists, then print one JSON line
       webui_page.py list URL [N] load the page N times (default 3); per load, ms from navigation start to
                                  the first flow rows in the list, and the list's count line
       webui_page.py body URL P   open the newest flow whose path is P in the detail pane, then "show all",
                                  scroll to the end and search: the longest main-thread task
                                  (PerformanceObserver 'longtask') of each step, and when the lines showed

URL is the `web ui:` line's address (with ?token=). Every result is one JSON line on stdout.
"""
import json
import os
import sys
import time

from playwright.sync_api import sync_playwright

# Init scripts run through the DevTools protocol, before the page's own scripts and outside its CSP.
OBSERVE = """
window.__long = [];
new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__long.push({start: e.startTime, ms: e.duration});
}).observe({type: 'longtask', buffered: true});
window.__rowsAt = null;
(function poll() {
    const row = document.querySelector('flow-list .flow-row[data-id] .c-path');
    if (row && row.textContent) { window.__rowsAt = performance.now(); return; }
    requestAnimationFrame(poll);
})();
"""
ROWS = "() => window.__rowsAt !== null"
LIVE = "() => document.getElementById('connection-state')?.textContent === 'live'"


def new_page(browser):
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    page.add_init_script(OBSERVE)
    return page


def longest(page, since):
    return page.evaluate("t => Math.max(0, ...window.__long.filter(e => e.start >= t).map(e => e.ms))", since)


def follow(browser, url, stop):
    page = new_page(browser)
    page.goto(url)
    page.wait_for_function(LIVE, timeout=20000)
    print("ready", flush=True)
    while not os.path.exists(stop):
        page.wait_for_timeout(200)
    rows = page.evaluate("() => document.querySelectorAll('flow-list .flow-row[data-id]').length")
    count = page.text_content("flow-list .list-count")
    print(json.dumps({"rows_rendered": rows, "count": count, "longest_task_ms": longest(page, 0),
                      "state": page.text_content("#connection-state")}), flush=True)


def list_times(browser, url, loads):
    results = []
    for _ in range(loads):
        page = new_page(browser)
        page.goto(url)
        page.wait_for_function(ROWS, timeout=60000)
        page.wait_for_function("() => !document.querySelector('flow-list .list-count').textContent"
                               ".startsWith('loading')", timeout=60000)
        results.append({"rows_ms": page.evaluate("() => window.__rowsAt"),
                        "count": page.text_content("flow-list .list-count"),
                        "longest_task_ms": longest(page, 0)})
        page.context.close()
    print(json.dumps({"loads": results}), flush=True)


VIEW = "document.querySelector('flow-detail line-view')"


def body(browser, url, path):
    page = new_page(browser)
    page.goto(url)
    page.wait_for_function(ROWS, timeout=30000)
    page.wait_for_function("p => [...document.querySelectorAll('flow-list .flow-row[data-id]')]"
                           ".some(r => r.querySelector('.c-path').textContent === p)", arg=path, timeout=30000)
    row = page.evaluate("p => [...document.querySelectorAll('flow-list .flow-row[data-id]')]"
                        ".find(r => r.querySelector('.c-path').textContent === p).getAttribute('data-id')", path)
    page.wait_for_timeout(500)
    result = {}
    t0 = page.evaluate("() => performance.now()")
    began = time.monotonic()
    page.click("flow-list .flow-row[data-id='%s']" % row)
    # Shown: the first lines are on screen (the worker streams and formats the rest), or the pane says
    # the body could not be loaded (the store shed it: its write queue holds 32 MiB of bodies at most).
    page.wait_for_function("() => { const v = %s; return v && v.querySelector('.line:not([hidden]) .code')"
                           "?.textContent || document.querySelector('flow-detail .body-fallback'); }" % VIEW,
                           timeout=60000)
    if page.query_selector("flow-detail .body-fallback"):
        print(json.dumps({"error": page.text_content("flow-detail .body-note"),
                          "longest_task_ms": longest(page, t0)}), flush=True)
        return
    result["open_first_lines_ms"] = round((time.monotonic() - began) * 1000)
    page.wait_for_function("() => { const v = %s; return v && v.done; }" % VIEW, timeout=60000)
    result["open_ms"] = round((time.monotonic() - began) * 1000)
    page.wait_for_timeout(500)
    result["open_longest_task_ms"] = longest(page, t0)
    result["open_lines"] = page.evaluate("() => %s.lineCount" % VIEW)
    result["open_bytes"] = page.evaluate("() => %s.bytes" % VIEW)
    show_all = page.locator("flow-detail button.show-all")
    if show_all.count() > 0:
        t1 = page.evaluate("() => performance.now()")
        before = result["open_bytes"]
        began = time.monotonic()
        show_all.first.click()
        page.wait_for_function("n => { const v = %s; return v && v.bytes > n && v.lineCount > 0"
                               " && v.querySelector('.line:not([hidden]) .code')?.textContent; }" % VIEW,
                               arg=before, timeout=120000)
        result["all_first_lines_ms"] = round((time.monotonic() - began) * 1000)
        page.wait_for_function("() => %s.done" % VIEW, timeout=300000)
        result["all_ms"] = round((time.monotonic() - began) * 1000)
        # Scroll through the pretty-printed text too (middle, then the end): it must stay responsive.
        page.evaluate("() => { const v = %s; v.scrollTop = v.scrollHeight / 2; }" % VIEW)
        page.wait_for_timeout(500)
        page.evaluate("() => { const v = %s; v.scrollTop = v.scrollHeight; }" % VIEW)
        page.wait_for_function("n => [...%s.querySelectorAll('.line:not([hidden]) .gutter')]"
                               ".some(g => g.textContent === String(n))" % VIEW,
                               arg=page.evaluate("() => %s.lineCount" % VIEW), timeout=10000)
        result["all_last_line_shown"] = True
        # Search in the body (in the worker).
        began = time.monotonic()
        page.fill("flow-detail input.body-find", "user123@")
        page.press("flow-detail input.body-find", "Enter")
        page.wait_for_function("() => /^line /.test(document.querySelector('flow-detail .body-find-status')"
                               ".textContent)", timeout=120000)
        result["all_search_ms"] = round((time.monotonic() - began) * 1000)
        page.wait_for_timeout(500)
        result["all_longest_task_ms"] = longest(page, t1)
        result["all_lines"] = page.evaluate("() => %s.lineCount" % VIEW)
        result["all_bytes"] = page.evaluate("() => %s.bytes" % VIEW)
    result["longest_task_ms"] = longest(page, t0)
    result["tasks_over_50ms"] = page.evaluate("t => window.__long.filter(e => e.start >= t).length", t0)
    result["tasks"] = page.evaluate("t => window.__long.filter(e => e.start >= t)"
                                    ".map(e => [Math.round(e.start - t), Math.round(e.ms)])", t0)
    print(json.dumps(result), flush=True)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("follow", "list", "body"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    command, url = sys.argv[1], sys.argv[2]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                             args=["--no-sandbox"])
        try:
            if command == "follow":
                follow(browser, url, sys.argv[3])
            elif command == "list":
                list_times(browser, url, int(sys.argv[3]) if len(sys.argv) > 3 else 3)
            else:
                body(browser, url, sys.argv[3])
        finally:
            browser.close()


if __name__ == "__main__":
    main()
