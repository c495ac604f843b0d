#!/usr/bin/env python3
"""Drives DevProxy's web UI in headless Chromium (Playwright with the system browser) for the
browser tests: a flow made with curl through the proxy appears live; a filter narrows the list
to exactly the matching flows and an invalid one keeps the list; a gzip JSON response shows
pretty-printed; replay reaches the origin again and adds a flow; hostile flows show their
characters and run nothing. With --shots DIR it also saves the README's screenshots.

Starts its own origin (stdlib HTTP server on 127.0.0.1, port 0) and stops it at the end.
Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_browser.py --ui URL --proxy http://127.0.0.1:PORT [--shots DIR]
"""
import argparse, gzip, http.server, json, os, subprocess, sys, threading, time, urllib.parse

from playwright.sync_api import sync_playwright

HOSTILE_PATH = "/evil/<script>window.__pwned='url'</script>/<img/src=x/onerror=window.__pwned='img'>"
HOSTILE_QUERY = "next=javascript:window.__pwned='js'"
HOSTILE_HEADER = "<img src=x onerror=\"window.__pwned='header'\"><script>window.__pwned='h2'</script>"
HOSTILE_JSON = {
    "<img src=x onerror=\"window.__pwned='key'\">": "javascript:window.__pwned='value'",
    "<script>window.__pwned='key2'</script>": [1, 2],
}
HOSTILE_HTML = b"<!doctype html><script>window.__pwned='html'</script><img src=x onerror=\"window.__pwned='html2'\">"
ITEMS = {"items": [{"name": "alpha", "id": 1}, {"name": "beta", "id": 2}], "note": "gzip-json-marker"}


class Origin(http.server.ThreadingHTTPServer):
    daemon_threads = True
    hits = {}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, content_type, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in extra:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        self.server.hits[path] = self.server.hits.get(path, 0) + 1
        if path == "/items.json":
            body = gzip.compress(json.dumps(ITEMS, separators=(",", ":")).encode())
            self.send(200, body, "application/json", [("Content-Encoding", "gzip")])
        elif path == "/hostile.json":
            self.send(200, json.dumps(HOSTILE_JSON).encode(), "application/json", [("X-Evil", HOSTILE_HEADER)])
        elif path == "/hostile.html":
            self.send(200, HOSTILE_HTML, "text/html")
        elif path.startswith("/status/"):
            self.send(int(path.split("/")[2]), b"status", "text/plain")
        else:
            self.send(200, ("hello from " + path).encode(), "text/plain", [("X-Evil", HOSTILE_HEADER)])


class Checks:
    def __init__(self):
        self.failed = False

    def result(self, name, ok, detail=""):
        print(("PASS" if ok else "FAIL"), name, detail, flush=True)
        self.failed = self.failed or not ok


def curl(proxy, url, headers=()):
    args = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "-x", proxy, "--path-as-is"]
    for header in headers:
        args += ["-H", header]
    return subprocess.run(args + [url], capture_output=True, text=True, timeout=20).stdout


def row_texts(page):
    """The path cells of the rows the list shows (its loaded rows in view)."""
    return page.eval_on_selector_all("flow-list .flow-row[data-id] .c-path", "cells => cells.map(c => c.textContent)")


def wait_rows(page, predicate_js, arg, timeout=10000):
    page.wait_for_function(predicate_js, arg=arg, timeout=timeout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ui", required=True)
    parser.add_argument("--proxy", required=True)
    parser.add_argument("--shots")
    options = parser.parse_args()
    checks = Checks()
    origin = Origin(("127.0.0.1", 0), Handler)
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d" % origin.server_address[1]
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                                 args=["--no-sandbox"])
            try:
                run(browser, options, base, origin, checks)
            finally:
                browser.close()
    finally:
        origin.shutdown()
        origin.server_close()
    sys.exit(1 if checks.failed else 0)


def run(browser, options, base, origin, checks):
    ui = urllib.parse.urlsplit(options.ui)
    context = browser.new_context(viewport={"width": 1400, "height": 800}, base_url="%s://%s" % (ui.scheme, ui.netloc))
    page = context.new_page()
    problems = []
    page.on("dialog", lambda dialog: (problems.append("dialog: " + dialog.message), dialog.dismiss()))
    # Failed loads (the invalid filter's 400) are network log lines, not script errors; CSP
    # violations are caught by the listener below.
    page.on("console", lambda message: message.type == "error" and not message.text.startswith(
        "Failed to load resource") and problems.append("console: " + message.text))
    page.on("pageerror", lambda error: problems.append("page error: %s" % error))
    # Init scripts run through the DevTools protocol, outside the page's CSP.
    page.add_init_script("""
        window.__violations = [];
        document.addEventListener('securitypolicyviolation',
            (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
    """)
    page.goto(options.ui)
    page.wait_for_selector("flow-list .list-count", timeout=10000)
    page.wait_for_function("() => document.getElementById('connection-state').textContent === 'live'",
                           timeout=10000)
    checks.result("token-stripped", "token=" not in page.url, page.url)

    # A request made with curl through the proxy appears in the open page.
    unique = "/live/%d" % int(time.time() * 1000)
    began = time.monotonic()
    curl(options.proxy, base + unique)
    try:
        wait_rows(page, "p => [...document.querySelectorAll('flow-list .flow-row[data-id] .c-path')]"
                        ".some(c => c.textContent === p)", unique)
        checks.result("live-update", True, "%d ms" % ((time.monotonic() - began) * 1000))
    except Exception as error:
        checks.result("live-update", False, str(error).splitlines()[0])

    # A filter narrows the list to exactly the matching flows; an invalid one keeps the list.
    for path in ("/alpha/1", "/alpha/2", "/beta/1"):
        curl(options.proxy, base + path)
    page.wait_for_function("() => [...document.querySelectorAll('flow-list .c-path')]"
                           ".some(c => c.textContent === '/beta/1')", timeout=10000)
    page.keyboard.press("/")
    checks.result("slash-focuses-filter", page.evaluate("() => document.activeElement.id") == "filter")
    page.keyboard.type("~u /alpha/")
    page.keyboard.press("Enter")
    try:
        wait_rows(page, "() => { const p = [...document.querySelectorAll('flow-list .flow-row[data-id] .c-path')]"
                        ".map(c => c.textContent); return p.length === 2 && p.every(t => t.startsWith('/alpha/')); }",
                  None)
        total = page.request.get("/api/flows?filter=" + urllib.parse.quote("~u /alpha/")).json()["total"]
        shown = sorted(row_texts(page))
        count = page.text_content("flow-list .list-count")
        checks.result("filter-narrows", shown == ["/alpha/1", "/alpha/2"] and total == 2 and count.startswith("2 flows"),
                      "%s total=%s %r" % (shown, total, count))
    except Exception as error:
        checks.result("filter-narrows", False, "%s %s" % (row_texts(page), str(error).splitlines()[0]))
    page.fill("#filter", "~u /alpha/ & (")
    page.keyboard.press("Enter")
    try:
        page.wait_for_selector("#filter-error:not([hidden])", timeout=5000)
        message = page.text_content("#filter-error .filter-message")
        marked = page.text_content("#filter-error mark") is not None
        kept = sorted(row_texts(page)) == ["/alpha/1", "/alpha/2"]
        invalid = page.get_attribute("#filter", "aria-invalid") == "true"
        checks.result("filter-invalid-keeps-list", bool(message) and "column" in message and marked and kept and invalid,
                      repr(message))
    except Exception as error:
        checks.result("filter-invalid-keeps-list", False, str(error).splitlines()[0])
    page.fill("#filter", "")
    page.keyboard.press("Enter")
    page.wait_for_function("() => !document.querySelector('flow-list .list-count').textContent.includes('match')")

    # A gzip JSON response shows pretty-printed.
    curl(options.proxy, base + "/items.json")
    open_flow(page, "/items.json")
    try:
        page.wait_for_function("() => { const v = document.querySelector('flow-detail line-view');"
                               " return v && v.text && v.text.includes('gzip-json-marker'); }", timeout=10000)
        text = page.evaluate("() => document.querySelector('flow-detail line-view').text")
        lines = page.eval_on_selector_all("flow-detail line-view .line:not([hidden]) .code",
                                          "cells => cells.map(c => c.textContent)")
        headers = page.text_content("flow-detail table.headers")
        facts = page.text_content("flow-detail .body-facts")
        ok = '\n  "items": [\n    {\n      "name": "alpha",' in text and '      "name": "alpha",' in lines \
            and "gzip" in headers.lower() and "decoded from gzip" in facts
        checks.result("gzip-json-pretty", ok, "%r / %r" % (text[:80], facts))
        page.click("flow-detail line-view .fold[data-id='0']")
        page.wait_for_function("() => document.querySelector('flow-detail line-view .line .code')"
                               ".textContent.includes('lines')", timeout=3000)
        checks.result("json-folds", True, page.text_content("flow-detail line-view .line .code"))
        page.click("flow-detail line-view .fold[data-id='0']")
    except Exception as error:
        checks.result("gzip-json-pretty", False, str(error).splitlines()[0])
    if options.shots:
        page.screenshot(path=os.path.join(options.shots, "detail.png"))

    # Replay reaches the origin again and adds a flow (keyboard: r).
    curl(options.proxy, base + "/replay-me")
    open_flow(page, "/replay-me")
    before = origin.hits.get("/replay-me", 0)
    page.focus("flow-list .flow-viewport")
    page.keyboard.press("r")
    try:
        page.wait_for_function("() => [...document.querySelectorAll('flow-list .flow-row[data-id]')]"
                               ".filter(r => r.querySelector('.c-path').textContent === '/replay-me').length === 2",
                               timeout=15000)
        replayed = page.eval_on_selector_all("flow-list .flow-row.m-replay .c-path", "c => c.map(x => x.textContent)")
        checks.result("replay", origin.hits.get("/replay-me", 0) == before + 1 and "/replay-me" in replayed,
                      "hits %d→%d, replay rows %s" % (before, origin.hits.get("/replay-me", 0), replayed))
    except Exception as error:
        checks.result("replay", False, "hits %d→%d %s" % (before, origin.hits.get("/replay-me", 0),
                                                         str(error).splitlines()[0]))

    # j/k move the selection; Esc closes the detail.
    selected = page.get_attribute("flow-list .flow-row.selected", "data-id")
    page.keyboard.press("j")
    page.wait_for_timeout(100)
    moved = page.get_attribute("flow-list .flow-row.selected", "data-id")
    page.keyboard.press("k")
    page.wait_for_timeout(100)
    back = page.get_attribute("flow-list .flow-row.selected", "data-id")
    page.keyboard.press("Escape")
    page.wait_for_timeout(100)
    checks.result("keyboard", moved != selected and back == selected and page.is_hidden("flow-detail"),
                  "%s → %s → %s" % (selected, moved, back))

    # Hostile flows show their characters and run nothing.
    curl(options.proxy, base + HOSTILE_PATH + "?" + HOSTILE_QUERY, ["X-Evil: " + HOSTILE_HEADER])
    curl(options.proxy, base + "/hostile.json")
    curl(options.proxy, base + "/hostile.html")
    shown = []
    try:
        open_flow(page, "/evil/", prefix=True)
        page.wait_for_selector("flow-detail .detail-title", timeout=5000)
        title = page.text_content("flow-detail .detail-title")
        page.click("#detail-tab-request")
        request_headers = page.text_content("flow-detail table.headers")
        shown.append("<script>window.__pwned='url'</script>" in title and "onerror=window.__pwned='img'" in title
                     and "javascript:window.__pwned='js'" in title and HOSTILE_HEADER in request_headers)
        open_flow(page, "/hostile.json")
        page.wait_for_function("() => document.querySelector('flow-detail line-view')?.text?.includes('key2')",
                               timeout=10000)
        text = page.evaluate("() => document.querySelector('flow-detail line-view').text")
        response_headers = page.text_content("flow-detail table.headers")
        shown.append("\"<img src=x onerror=\\\"window.__pwned='key'\\\">\"" in text
                     and "javascript:window.__pwned='value'" in text and HOSTILE_HEADER in response_headers)
        open_flow(page, "/hostile.html")
        page.wait_for_function("() => document.querySelector('flow-detail line-view')?.text?.includes('html2')",
                               timeout=10000)
        shown.append(HOSTILE_HTML.decode() in page.evaluate("() => document.querySelector('flow-detail line-view').text"))
    except Exception as error:
        shown.append("error: " + str(error).splitlines()[0])
    page.wait_for_timeout(500)
    pwned = page.evaluate("() => window.__pwned ?? null")
    # DevProxy's own images (the CA panel's onboarding QR code) are allowed; none may come from a flow.
    images = [src for src in page.eval_on_selector_all("img", "list => list.map(i => i.getAttribute('src'))")
              if src != "/api/onboarding/qr.svg"]
    scripts = page.eval_on_selector_all("script", "list => list.map(s => s.getAttribute('src'))")
    violations = page.evaluate("() => window.__violations")
    checks.result("hostile-shown-as-text", shown == [True, True, True], repr(shown))
    checks.result("hostile-runs-nothing",
                  pwned is None and not images and scripts == ["app.js"] and not violations and not problems,
                  "pwned=%r images=%r scripts=%r violations=%r problems=%r"
                  % (pwned, images, scripts, violations, problems))

    if options.shots:
        page.keyboard.press("Escape")
        page.wait_for_timeout(200)
        page.screenshot(path=os.path.join(options.shots, "list.png"))
        page.click("#tab-pinning")
        page.wait_for_selector("pinning-panel h2", timeout=5000)
        page.wait_for_timeout(200)
        page.screenshot(path=os.path.join(options.shots, "pinning.png"))
        page.click("#tab-flows")
        page.emulate_media(color_scheme="dark")
        open_flow(page, "/items.json")
        page.wait_for_function("() => document.querySelector('flow-detail line-view')?.text", timeout=10000)
        page.wait_for_timeout(200)
        page.screenshot(path=os.path.join(options.shots, "detail-dark.png"))
    context.close()


def open_flow(page, path, prefix=False):
    """Clicks the newest row whose path is `path` (or starts with it) and waits for its detail."""
    test = "t.startsWith(p)" if prefix else "t === p"
    page.wait_for_function("p => [...document.querySelectorAll('flow-list .flow-row[data-id]')]"
                           ".some(r => { const t = r.querySelector('.c-path').textContent; return %s; })" % test,
                           arg=path, timeout=10000)
    row_id = page.evaluate("p => [...document.querySelectorAll('flow-list .flow-row[data-id]')]"
                           ".filter(r => { const t = r.querySelector('.c-path').textContent; return %s; })"
                           ".sort((a, b) => a.getAttribute('aria-rowindex') - b.getAttribute('aria-rowindex'))[0]"
                           ".getAttribute('data-id')" % test, path)
    page.click("flow-list .flow-row[data-id='%s']" % row_id)
    page.wait_for_function("id => { const d = document.querySelector('flow-detail');"
                           " return !d.hidden && d.querySelector('.detail-title') && !d.hasAttribute('aria-busy'); }",
                           arg=row_id, timeout=10000)


if __name__ == "__main__":
    main()
