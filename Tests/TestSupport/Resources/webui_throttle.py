#!/usr/bin/env python3
"""The web UI's throttle marker (headless Chromium, Playwright with the system browser): beside a
`devproxy run --throttle slow-4g --throttle-hosts '*.example.com'` the top bar says
`⏱ throttled: slow-4g (…)` and its tooltip names the hosts; beside a proxy without `--throttle`
nothing is shown. `--only throttled` or `--only plain` says which proxy this is.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_throttle.py --ui URL --proxy http://127.0.0.1:PORT --only throttled|plain
"""
import argparse, sys

from browser_page import Checks, chromium, live_page

MARKER = """() => {
    const marker = document.getElementById('throttle-state');
    return marker && {shown: !marker.hidden && marker.getClientRects().length > 0,
                      text: marker.textContent, title: marker.title,
                      inTopBar: Boolean(marker.closest('header.top'))};
}"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ui", required=True)
    parser.add_argument("--proxy", required=True)
    parser.add_argument("--only", required=True, choices=["throttled", "plain"])
    options = parser.parse_args()
    checks = Checks()
    with chromium() as browser:
        page, problems = live_page(browser, options.ui)
        # The info line is written from the same /api/info answer: once it is there, so is the marker.
        page.wait_for_function("() => document.getElementById('info-line').textContent.includes('DevProxy')",
                               timeout=10000)
        marker = page.evaluate(MARKER)
        if options.only == "throttled":
            checks.result("throttle-shown", bool(marker) and marker["shown"] and marker["inTopBar"]
                          and marker["text"] == "⏱ throttled: slow-4g (1.44 Mbit/s down, 675 kbit/s up, +563 ms)",
                          repr(marker))
            checks.result("throttle-hosts-in-tooltip", bool(marker) and "*.example.com" in marker["title"]
                          and "slow-4g" in marker["title"], repr(marker))
        else:
            checks.result("throttle-absent", not marker or (not marker["shown"] and marker["text"] == ""),
                          repr(marker))
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
