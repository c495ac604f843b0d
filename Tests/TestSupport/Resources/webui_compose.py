#!/usr/bin/env python3
"""New request in the web UI (headless Chromium, Playwright with the system browser), through a proxy
the caller started (`devproxy run --web`); the script serves an origin that records what it gets.

Checks: the toolbar's "New request" opens the dialog; a Chrome-style "Copy as cURL (bash)" command
pasted and filled (a $'…' body with an escaped quote and UTF-8 bytes, header fields) fills method, URL,
headers and body, and Send makes the origin get exactly that request, a new flow arriving in the
list; DevProxy's own "Copy as curl" of a captured POST, pasted into the dialog opened with `n`, sends
the same request again (method, path, body, the client's own header); a multipart `-F` command is
refused with the reason and nothing is sent; a header value with markup stays text (no element made,
nothing run). No dialog, script error or CSP violation on the way.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_compose.py --ui URL --proxy http://127.0.0.1:PORT
"""
import http.server, json, subprocess, sys, time

from browser_page import Checks, live_page, origin_and_chromium, ui_parser

HOSTILE = "<img src=x onerror=window.__xss=1>"


class Origin(http.server.BaseHTTPRequestHandler):
    """Records each request (method, path, header fields, body) and answers 200 `ok`."""
    protocol_version = "HTTP/1.1"
    got = []

    def log_message(self, *args):
        pass

    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        Origin.got.append({"method": self.command, "path": self.path,
                           "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = answer


def wait_for(predicate, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def paste_and_send(page, command, key=False):
    """Opens the dialog (the button, or `n`), fills it from `command`, sends; returns the origin's
    new request or None."""
    before = len(Origin.got)
    if key:
        page.locator("flow-list").focus()
        page.keyboard.press("n")
    else:
        page.click("#new-request")
    page.wait_for_selector("#resend-dialog[open] textarea[name=curl]", timeout=10000)
    page.fill("#resend-dialog textarea[name=curl]", command)
    page.click("#new-request-fill")
    page.click("#new-request-send")
    page.wait_for_function("() => !document.querySelector('#resend-dialog').open", timeout=10000)
    return Origin.got[-1] if wait_for(lambda: len(Origin.got) > before) else None


def main():
    parser = ui_parser()
    options = parser.parse_args()
    checks = Checks()
    with origin_and_chromium(http.server.ThreadingHTTPServer, Origin) as (browser, base, origin):
        page, problems = live_page(browser, options.ui)
        page.wait_for_selector("#new-request:not([hidden])", timeout=10000)

        # A browser's "Copy as cURL (bash)": line continuations, $'…' with \' and UTF-8 bytes.
        chrome = ("curl '%s/v1/items?x=1' \\\n  -H 'accept: application/json' \\\n"
                  "  -H 'content-type: application/json' \\\n  -H 'x-trace: %s' \\\n"
                  "  --data-raw $'{\"name\":\"caf\\xc3\\xa9\",\"note\":\"it\\'s\"}'") % (base, HOSTILE)
        page.click("#new-request")
        page.wait_for_selector("#resend-dialog[open] textarea[name=curl]", timeout=10000)
        page.fill("#resend-dialog textarea[name=curl]", chrome)
        page.click("#new-request-fill")
        filled = page.evaluate("""() => {
            const d = document.querySelector('#resend-dialog');
            return {method: d.querySelector('input[name=method]').value, url: d.querySelector('input[name=url]').value,
                    headers: d.querySelector('textarea[name=headers]').value, body: d.querySelector('textarea[name=body]').value,
                    imgs: d.querySelectorAll('img').length};
        }""")
        checks.result("curl-fills-the-fields", filled["method"] == "POST" and filled["url"] == base + "/v1/items?x=1"
                      and "content-type: application/json" in filled["headers"]
                      and filled["body"] == '{"name":"café","note":"it\'s"}' and filled["imgs"] == 0, repr(filled))
        before = len(Origin.got)
        page.click("#new-request-send")
        page.wait_for_function("() => !document.querySelector('#resend-dialog').open", timeout=10000)
        got = Origin.got[-1] if wait_for(lambda: len(Origin.got) > before) else None
        checks.result("pasted-request-sent", got is not None and got["method"] == "POST" and got["path"] == "/v1/items?x=1"
                      and got["body"] == '{"name":"café","note":"it\'s"}'.encode()
                      and got["headers"].get("x-trace") == HOSTILE, repr(got))
        arrived = page.wait_for_function(
            "() => [...document.querySelectorAll('flow-list .flow-row[data-id] .c-path')].some(c => c.textContent.startsWith('/v1/items'))",
            timeout=10000)
        checks.result("new-flow-listed", bool(arrived))

        # DevProxy's own Copy as curl, pasted back: the same request again.
        subprocess.run(["curl", "-s", "-o", "/dev/null", "-x", options.proxy, "-X", "PUT", "-H", "X-Client: own",
                        "-H", "Content-Type: text/plain", "--data-binary", "it's\nmine", base + "/own?a=1&b=%20"],
                       timeout=20, check=True)
        original = Origin.got[-1]
        flow_id = page.evaluate("""async () => {
            for (let i = 0; i < 100; i++) {
                const r = await fetch('/api/flows?filter=' + encodeURIComponent('~u /own'));
                const j = await r.json();
                if (j.flows.length) return j.flows[0].id;
                await new Promise((done) => setTimeout(done, 100));
            }
            return null;
        }""")
        exported = page.evaluate("async (id) => (await fetch(`/api/flows/${id}/export?format=curl`)).text()", flow_id)
        again = paste_and_send(page, exported, key=True)
        checks.result("own-curl-export-round-trips", again is not None and again["method"] == original["method"]
                      and again["path"] == original["path"] and again["body"] == original["body"]
                      and again["headers"].get("x-client") == "own", repr((exported, again, original)))

        # What it cannot send: the reason, and nothing sent.
        before = len(Origin.got)
        page.click("#new-request")
        page.wait_for_selector("#resend-dialog[open] textarea[name=curl]", timeout=10000)
        page.fill("#resend-dialog textarea[name=curl]", "curl -F 'file=@photo.png' %s/upload" % base)
        page.click("#new-request-fill")
        reason = page.text_content("#resend-dialog .error-text")
        page.keyboard.press("Escape")
        time.sleep(0.3)
        checks.result("multipart-refused-with-reason", "multipart" in (reason or "") and len(Origin.got) == before,
                      repr(reason))
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations")
                      and not page.evaluate("window.__xss"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
