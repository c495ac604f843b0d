#!/usr/bin/env python3
"""The web UI list's status cell of gRPC calls that ended in an error before any response (headless
Chromium, Playwright with the system browser): each row given says its call's gRPC status, and its
tooltip the error and the status.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_grpc_status.py --ui URL --row PATH=CELL=TOOLTIP [--row …]
"""
import argparse, sys

from browser_page import Checks, chromium, ui_context, watched_page


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ui", required=True)
    parser.add_argument("--row", action="append", required=True,
                        help="PATH=CELL=TOOLTIP: the row of the call to PATH shows CELL, its tooltip TOOLTIP")
    options = parser.parse_args()
    checks = Checks()
    with chromium() as browser:
        page, problems = watched_page(ui_context(browser, options.ui))
        page.goto(options.ui)
        for row in options.row:
            path, cell, tooltip = row.split("=")
            try:
                page.wait_for_function("p => [...document.querySelectorAll('flow-list .flow-row[data-id]')]"
                                       ".some(r => r.querySelector('.c-path')?.textContent === p)", arg=path,
                                       timeout=10000)
                shown = page.evaluate("p => { const r = [...document.querySelectorAll('flow-list .flow-row[data-id]')]"
                                      ".find(r => r.querySelector('.c-path')?.textContent === p);"
                                      " const c = r.querySelector('.c-status'); return [c.textContent, c.title]; }",
                                      path)
                checks.result("status-cell " + path, shown == [cell, tooltip], repr(shown))
            except Exception as error:
                checks.result("status-cell " + path, False, str(error).splitlines()[0])
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
