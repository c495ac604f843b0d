#!/usr/bin/env python3
"""Edit and resend of a typed gRPC call in the web UI (headless Chromium, Playwright with the
system browser): the dialog shows the call's request message as JSON, an edit that is not JSON is
refused in the dialog, and the edited message is sent (the caller checks the new flow).

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_grpc_resend.py --ui URL --path /pkg.Service/Method --expect JSON --send JSON
"""
import argparse, json, sys

from browser_page import Checks, chromium, ui_context, watched_page
from webui_browser import open_flow


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ui", required=True)
    parser.add_argument("--path", required=True)
    parser.add_argument("--expect", required=True, help="the request message the dialog must show, as JSON")
    parser.add_argument("--send", required=True, help="the edited message to send, as JSON")
    options = parser.parse_args()
    checks = Checks()
    with chromium() as browser:
        page, problems = watched_page(ui_context(browser, options.ui))
        page.goto(options.ui)
        open_flow(page, options.path)
        page.click("flow-detail #resend")
        page.wait_for_selector("#resend-dialog[open] textarea[name=body]", timeout=10000)
        body = page.locator("#resend-dialog textarea[name=body]")
        shown = body.input_value()
        label = page.locator("#resend-dialog label.field:has(textarea[name=body]) > span").inner_text()
        try:
            as_json = json.loads(shown)
        except ValueError:
            as_json = None
        checks.result("grpc-resend-shows-json", as_json == json.loads(options.expect) and "as JSON" in label,
                      repr((shown, label)))
        body.fill("{not json")
        page.click("#resend-send")
        page.wait_for_function("() => document.querySelector('#resend-dialog .error-text').textContent !== ''",
                               timeout=10000)
        refusal = page.locator("#resend-dialog .error-text").inner_text()
        checks.result("grpc-resend-refuses-what-is-not-json", refusal.startswith("the messages are not JSON"), refusal)
        body.fill(options.send)
        page.click("#resend-send")
        page.wait_for_function("() => !document.querySelector('#resend-dialog').open", timeout=10000)
        checks.result("grpc-resend-sent", True)
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
