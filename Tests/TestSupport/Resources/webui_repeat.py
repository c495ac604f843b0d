#!/usr/bin/env python3
"""Repeat… in the web UI (headless Chromium, Playwright with the system browser), through a proxy
the caller started (`devproxy run --web`); the origin is webui_repeat_api.py's, which counts what it
gets, the most at once, and answers 429 after the first LIMIT.

Checks: the flow's "Repeat…" button opens a dialog (count, concurrency, delay); Start with 12 × 3
reaches the origin exactly 12 times, at most 3 at once, and the dialog's summary says 12 of 12
done with 200 × LIMIT and 429 × the rest, and the timings; "Open the first" selects a repetition, a
replay of the flow; out-of-limit counts are refused in the dialog with the server's reason and
nothing is sent; Cancel stops a long repeat early. No dialog, script error or CSP violation.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_repeat.py --ui URL --proxy http://127.0.0.1:PORT
"""
import sys, time

from browser_page import Checks, chromium, live_page, ui_parser
from webui_repeat_api import LIMIT, Origin, send_through, serve_origin


def open_dialog(page, count, concurrency, delay):
    page.click("#repeat")
    page.wait_for_selector("#resend-dialog[open] input[name=count]", timeout=10000)
    page.fill("#resend-dialog input[name=count]", str(count))
    page.fill("#resend-dialog input[name=concurrency]", str(concurrency))
    page.fill("#resend-dialog input[name=delay_ms]", str(delay))
    page.click("#repeat-start")


def main():
    parser = ui_parser()
    options = parser.parse_args()
    checks = Checks()
    origin = serve_origin()
    url = f"http://127.0.0.1:{origin.server_address[1]}/limited?page=1"
    with chromium() as browser:
        page, problems = live_page(browser, options.ui)
        send_through(options.proxy, url)
        row = "flow-list .flow-row[data-id]"
        page.wait_for_selector(row, timeout=10000)
        flow_id = page.get_attribute(row, "data-id")
        page.click(row)
        page.wait_for_selector("#repeat:not([disabled])", timeout=10000)

        # Out of limits: the server's reason in the dialog, nothing sent.
        Origin.reset()
        page.click("#repeat")
        page.wait_for_selector("#resend-dialog[open] input[name=count]", timeout=10000)
        page.evaluate("() => { const i = document.querySelector('#resend-dialog input[name=count]'); "
                      "i.removeAttribute('max'); i.value = '5000'; }")
        page.click("#repeat-start")
        page.wait_for_function("() => document.querySelector('#resend-dialog .error-text').textContent !== ''",
                               timeout=10000)
        reason = page.text_content("#resend-dialog .error-text")
        checks.result("out-of-limits-refused-with-reason", "count must be" in reason and Origin.count == 0,
                      repr((reason, Origin.count)))
        page.keyboard.press("Escape")

        Origin.reset()
        open_dialog(page, 12, 3, 0)
        page.wait_for_function("() => document.getElementById('repeat-state')?.textContent === 'done'",
                               timeout=30000)
        summary = page.evaluate("""() => ({
            line: document.getElementById('repeat-summary').textContent,
            rows: [...document.querySelectorAll('#repeat-statuses tbody tr')].map(r => [...r.cells].map(c => c.textContent)),
            times: document.getElementById('repeat-times').textContent,
            cancel: document.getElementById('repeat-cancel').disabled})""")
        checks.result("origin-saw-12-at-most-3-at-once", Origin.count == 12 and 1 < Origin.peak <= 3,
                      f"count={Origin.count} peak={Origin.peak}")
        checks.result("summary-shows-statuses", summary["line"].startswith("12 of 12 done")
                      and summary["rows"] == [["200", str(LIMIT)], ["429", str(12 - LIMIT)]] and summary["cancel"],
                      repr(summary))
        checks.result("summary-shows-times", "fastest" in summary["times"] and "median" in summary["times"]
                      and "slowest" in summary["times"], repr(summary["times"]))
        page.click("#repeat-first")
        page.wait_for_function("(id) => document.querySelector('flow-detail')?.textContent.includes('replay of ' + id)",
                               arg=flow_id, timeout=10000)
        checks.result("first-repetition-opens-as-a-replay", not page.evaluate(
            "() => document.getElementById('resend-dialog').open"))

        # Back to the original; a long repeat, cancelled.
        page.click(f"flow-list .flow-row[data-id='{flow_id}']")
        page.wait_for_selector("#repeat:not([disabled])", timeout=10000)
        Origin.reset()
        open_dialog(page, 500, 2, 150)
        page.wait_for_function("() => document.getElementById('repeat-state')?.textContent === 'running'",
                               timeout=10000)
        time.sleep(0.8)
        page.click("#repeat-cancel")
        page.wait_for_function("() => document.getElementById('repeat-state')?.textContent === 'cancelled'",
                               timeout=10000)
        seen = Origin.count
        time.sleep(0.6)
        line = page.text_content("#repeat-summary")
        checks.result("cancel-stops-early", 0 < seen < 500 and Origin.count == seen
                      and line.startswith(f"{seen} of 500 done"), repr((seen, Origin.count, line)))
        page.click("#repeat-close")
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    origin.shutdown()
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
