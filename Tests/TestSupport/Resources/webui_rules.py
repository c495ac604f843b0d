#!/usr/bin/env python3
"""The web UI's Rules view (headless Chromium, Playwright with the system browser) beside
`devproxy run`: the tab opens the view; a rule that does not parse shows the server's reason beside
the form and adds nothing; a mock typed in the form (URL regex, status, content type, body) is
listed, switched on, and answers a request sent through the proxy (the origin, served here, is not
asked); switched off in the list, the origin answers again; a second mock for the same URL added
below it answers only once moved above it; deleted, they leave the list.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_rules.py --ui URL --proxy http://127.0.0.1:PORT
"""
import http.server, os, sys, urllib.error, urllib.request

from browser_page import Checks, live_page, origin_and_chromium, ui_parser, wait_or_explain


class Origin(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"from the origin"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass


ROWS = """() => [...document.querySelectorAll('rules-panel tbody tr')].map((row) => ({
    id: row.dataset.id, kind: row.querySelector('.rule-kind').textContent,
    text: row.querySelector('.rule-text').textContent, on: row.querySelector('input[type=checkbox]').checked,
    answer: row.querySelector('.rule-answer') ? row.querySelector('.rule-answer').textContent : ''}))"""

# What the Rules view shows, printed when a wait runs out.
SHOWN = """() => ({rows: [...document.querySelectorAll('rules-panel tbody tr')].map((row) => row.className + ' '
    + row.textContent), error: document.getElementById('rule-error')?.hidden === false
    ? document.getElementById('rule-error').textContent : null, text: document.getElementById('rule-text')?.value,
    body: document.getElementById('mock-body')?.value, panel: document.querySelector('rules-panel > p')?.textContent,
    live: document.getElementById('connection-state')?.textContent})"""


def through_proxy(proxy, url):
    for name in ("no_proxy", "NO_PROXY"):
        os.environ.pop(name, None)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
    try:
        with opener.open(url, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode()


def main():
    parser = ui_parser()
    options = parser.parse_args()
    checks = Checks()
    with origin_and_chromium(http.server.ThreadingHTTPServer, Origin) as (browser, base, _):
        page, problems = live_page(browser, options.ui)
        page.click("#tab-rules")
        page.wait_for_selector("rules-panel form.rule-form", timeout=10000)
        checks.result("rules-view-opens", page.is_visible("#view-rules") and "view=rules" in page.url, page.url)

        page.select_option("#rule-kind", "map-remote")
        placeholder = page.get_attribute("#rule-text", "placeholder")
        page.fill("#rule-text", "|~d api|https://(a/|https://b/")
        page.click("rules-panel button[type=submit]")
        wait_or_explain(page, "() => !document.getElementById('rule-error').hidden", SHOWN)
        error = page.text_content("#rule-error")
        checks.result("bad-rule-shows-the-reason", "is not a valid regular expression" in error
                      and not page.evaluate(ROWS) and placeholder.startswith("|~d "), repr((error, placeholder)))

        page.select_option("#rule-kind", "mock")
        checks.result("mock-fields-shown", page.is_visible("#mock-body"), "")
        page.fill("#rule-text", "|/rules-mock")
        page.fill("#mock-status", "202")
        page.fill("#mock-type", "text/plain; charset=utf-8")
        page.fill("#mock-body", "<b>typed in the page</b>")
        page.click("rules-panel button[type=submit]")
        wait_or_explain(page, "() => document.querySelectorAll('rules-panel tbody tr').length === 1", SHOWN)
        rows = page.evaluate(ROWS)
        checks.result("mock-listed", rows and rows[0]["kind"] == "mock" and rows[0]["text"] == "|/rules-mock"
                      and rows[0]["on"] and "202 text/plain" in rows[0]["answer"]
                      and page.is_hidden("#rule-error"), repr(rows))
        answer = through_proxy(options.proxy, base + "/rules-mock")
        checks.result("mock-answers", answer == (202, "text/plain; charset=utf-8", "<b>typed in the page</b>"),
                      repr(answer))

        page.uncheck("rules-panel tbody tr input[type=checkbox]")
        page.wait_for_selector("rules-panel tbody tr.rule-off", timeout=10000)
        answer = through_proxy(options.proxy, base + "/rules-mock")
        checks.result("mock-switched-off", answer[0] == 200 and answer[2] == "from the origin", repr(answer))

        page.check("rules-panel tbody tr input[type=checkbox]")
        wait_or_explain(page, "() => !document.querySelector('rules-panel tbody tr.rule-off')", SHOWN)
        page.fill("#rule-text", "|/rules-mock")
        page.fill("#mock-body", "the second mock")
        page.click("rules-panel button[type=submit]")
        wait_or_explain(page, "() => document.querySelectorAll('rules-panel tbody tr').length === 2", SHOWN)
        first = through_proxy(options.proxy, base + "/rules-mock")
        page.click("rules-panel tbody tr:nth-child(2) .rule-up")
        wait_or_explain(
            page, "() => document.querySelector('rules-panel tbody tr .rule-answer pre').textContent === 'the second mock'",
            SHOWN)
        moved = through_proxy(options.proxy, base + "/rules-mock")
        checks.result("first-mock-wins-until-moved", first[2] == "<b>typed in the page</b>"
                      and moved[2] == "the second mock", repr((first, moved)))

        for remaining in (1, 0):
            page.click("rules-panel .rule-delete")
            wait_or_explain(page, "(n) => document.querySelectorAll('rules-panel tbody tr').length === n",
                            SHOWN, arg=remaining)
        checks.result("mock-deleted", page.evaluate(ROWS) == [], "")
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
