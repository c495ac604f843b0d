#!/usr/bin/env python3
"""Mock… from a flow and Edit in the Rules view (headless Chromium, Playwright with the system
browser) beside `devproxy run --block-list '|~u never-asked-for|404'`: a JSON response sent gzip-encoded
by the origin served here is recorded through the proxy; its pane's Mock… opens the Rules view's
mock form filled from it (`~m GET`, the URL regex without its query, the status, the content type,
the body decoded); the body edited and saved answers curl through the proxy with the mock's
`X-DevProxy` header; Edit, Cancel leaves the rule; Edit, 503, Save answers 503; a second page (another
browser context) sees the rule appear and change without a reload; a PNG flow's mock (opened with
the `M` key) says its body is binary and answers the PNG's exact bytes; a body over 1 MiB is left to
type; a flow still waiting for its response fills status 200 and says so. The flag's rule has no
Edit, and says why in its tooltip.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_mock_rules.py --ui URL --proxy http://127.0.0.1:PORT
"""
import gzip, hashlib, http.server, json, os, struct, subprocess, sys, threading, time, urllib.request, zlib

from browser_page import Checks, live_page, origin_and_chromium, ui_parser
from webui_browser import open_flow

PROFILE = json.dumps({"name": "ana", "plan": "free", "tags": ["a", "b"]}).encode()


def png(width=40, height=30):
    """A real PNG (8-bit RGB, one filter byte a row), its pixels varied so zlib keeps them apart."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + bytes((x * 7 + y * 13) % 256 for x in range(width * 3)) for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


IMAGE = png()
# What /hang and /wait-head wait for before they end (at most 20 s): set when the checks are done.
RELEASE = threading.Event()


class Origin(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/hang") or self.path.startswith("/wait-head") or self.path.startswith("/events"):
            self.running()
            return
        if self.path.startswith("/api/profile"):
            body, headers = gzip.compress(PROFILE), [("Content-Type", "application/json"), ("Content-Encoding", "gzip")]
        elif self.path.startswith("/slow"):
            time.sleep(3)
            body, headers = b"late", [("Content-Type", "text/plain")]
        elif self.path.startswith("/big.txt"):
            body, headers = b"0123456789abcdef" * (1 << 16) + b"!", [("Content-Type", "text/plain")]
        elif self.path.startswith("/api/cors"):
            # What a browser page on another origin reads only with its Access-Control-Allow-Origin.
            body, headers = b'{"ok": true}', [("Content-Type", "application/json"),
                                              ("Access-Control-Allow-Origin", "https://shop.example.test")]
        elif self.path.startswith("/logo.png"):
            body, headers = IMAGE, [("Content-Type", "image/png")]
        else:
            body, headers = b"from the origin", [("Content-Type", "text/plain")]
        self.send_response(200)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # /slow's client (through the proxy) gave up first, as it was meant to

    def running(self):
        """A long poll: /hang sends its head (202, JSON) at once and its body when released;
        /wait-head sends nothing until then; /events streams events until then."""
        try:
            if self.path.startswith("/events"):
                # An event stream: one event every 0.3 s until released (the pane shows its record so far).
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for number in range(60):
                    self.wfile.write(b"data: %d\n\n" % number)
                    self.wfile.flush()
                    if RELEASE.wait(0.3):
                        return
                return
            if self.path.startswith("/hang"):
                self.send_response(202)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "12")
                self.end_headers()
                self.wfile.flush()
            RELEASE.wait(20)
            if self.path.startswith("/wait-head"):
                self.send_response(200)
                self.send_header("Content-Length", "12")
                self.end_headers()
            self.wfile.write(b'{"late": 1}\n')
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *arguments):
        pass


def curl(proxy, url):
    """`curl -x PROXY URL`: (status, headers as text, body bytes)."""
    result = subprocess.run(["curl", "-sS", "--max-time", "10", "-x", proxy, "-D", "-", "-o", "-", url],
                            capture_output=True, timeout=20)
    head, _, body = result.stdout.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    return int(lines[0].split()[1]) if lines and lines[0] else 0, "\n".join(lines[1:]), body


def record(proxy, url):
    """One request through the proxy, without curl's decoding (the origin's gzip stays as sent)."""
    for name in ("no_proxy", "NO_PROXY"):
        os.environ.pop(name, None)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
    with opener.open(url, timeout=10) as response:
        return response.read()


ROWS = """() => [...document.querySelectorAll('rules-panel tbody tr')].map((row) => ({
    text: row.querySelector('.rule-text').textContent, edit: Boolean(row.querySelector('.rule-edit')),
    from: row.querySelector('td:nth-child(4)').getAttribute('title') || '',
    answer: row.querySelector('.rule-answer') ? row.querySelector('.rule-answer').textContent : ''}))"""

FORM = """() => ({text: document.getElementById('rule-text').value, kind: document.getElementById('rule-kind').value,
    status: document.getElementById('mock-status').value, type: document.getElementById('mock-type').value,
    body: document.getElementById('mock-body').value, note: document.getElementById('mock-note').textContent,
    binary: document.getElementById('mock-binary').hidden ? null : document.getElementById('mock-binary').textContent,
    bodyShown: !document.getElementById('mock-body').closest('label').hidden})"""


def wait_answer(page, words):
    page.wait_for_function("(w) => [...document.querySelectorAll('rules-panel .rule-answer')]"
                           ".some((a) => a.textContent.includes(w))", arg=words, timeout=10000)


def main():
    parser = ui_parser()
    options = parser.parse_args()
    checks = Checks()
    with origin_and_chromium(http.server.ThreadingHTTPServer, Origin) as (browser, base, _):
        page, problems = live_page(browser, options.ui)
        # The second page shows the Rules view from the start, and is never reloaded.
        other, other_problems = live_page(browser, options.ui)
        other.click("#tab-rules")
        other.wait_for_function("() => document.querySelectorAll('rules-panel tbody tr').length === 1", timeout=10000)

        record(options.proxy, base + "/api/profile?session=1&x=y")
        open_flow(page, "/api/profile", prefix=True)
        page.click("#mock-from-flow")
        page.wait_for_function("() => !document.getElementById('view-rules').hidden"
                               " && document.getElementById('rule-text').value !== ''", timeout=10000)
        form = page.evaluate(FORM)
        regex = "^%s/api/profile(\\?.*)?$" % base.replace(".", "\\.")
        checks.result("mock-form-filled", form["kind"] == "mock" and form["text"] == "|~m GET|" + regex
                      and form["status"] == "200" and form["type"] == "application/json"
                      and form["body"] == PROFILE.decode() and form["binary"] is None
                      and "the query is left out of the match" in form["note"], repr(form))

        page.fill("#mock-body", json.dumps({"name": "ana", "plan": "premium"}))
        page.click("#rule-submit")
        page.wait_for_function("() => document.querySelectorAll('rules-panel tbody tr').length === 2", timeout=10000)
        status, headers, body = curl(options.proxy, base + "/api/profile?session=2")
        checks.result("mock-answers-curl", status == 200 and body == b'{"name": "ana", "plan": "premium"}'
                      and "X-DevProxy: answered by DevProxy (mock rule)" in headers, repr((status, headers, body)))
        # The flow the mock answered says so in its summary (`mapped`), `~mapped` finds it, and
        # the list's marker for it reads "answered by a mock rule".
        mocked = page.evaluate("""async () => {
            for (let i = 0; i < 100; i += 1) {
                const list = await (await fetch('/api/flows?limit=50&filter=' + encodeURIComponent('~mapped'))).json();
                const flow = list.flows.find((f) => (f.url ?? '').endsWith('/api/profile?session=2'));
                if (flow && flow.phase === 'finished') {
                    const marker = (await import('/flow-summary.js')).markers(flow).find((m) => m.key === 'mapped');
                    return [flow.mapped, marker?.symbol, marker?.label];
                }
                await new Promise((resolve) => setTimeout(resolve, 100));
            }
            return null; }""")
        checks.result("mock-flow-marked-mapped", mocked == ["mock", "✱", "answered by a mock rule"], repr(mocked))
        # Added, the form is for the next rule: it no longer says it is the flow's (it kept "Add a
        # mock from the flow" over an empty URL field and the last answer).
        heading = page.text_content("rules-panel form h3")
        checks.result("mock-form-heading-after-add", heading == "Add a rule", repr(heading))

        rows = page.evaluate(ROWS)
        checks.result("flag-rule-switch-only", not rows[0]["edit"]
                      and "--block-list on the command line" in rows[0]["from"]
                      and rows[1]["edit"], repr(rows))
        other.wait_for_function("() => document.querySelectorAll('rules-panel tbody tr').length === 2", timeout=10000)
        checks.result("second-page-sees-it", other.evaluate(ROWS)[1]["text"] == "|~m GET|" + regex, "")

        page.click("rules-panel tbody tr:nth-child(2) .rule-edit")
        form = page.evaluate(FORM)
        page.fill("#mock-status", "404")
        page.click("#rule-cancel")
        status, _, _ = curl(options.proxy, base + "/api/profile")
        checks.result("edit-cancel-leaves-it", form["text"] == "|~m GET|" + regex and form["status"] == "200"
                      and form["body"] == '{"name": "ana", "plan": "premium"}' and status == 200
                      and page.text_content("#rule-submit") == "Add", repr((form, status)))

        page.click("rules-panel tbody tr:nth-child(2) .rule-edit")
        page.fill("#mock-status", "503")
        page.click("#rule-submit")
        wait_answer(page, "→ 503")
        status, headers, body = curl(options.proxy, base + "/api/profile?session=3")
        rows = page.evaluate(ROWS)
        checks.result("edit-to-503", status == 503 and "mock rule" in headers and len(rows) == 2
                      and page.text_content("#rule-submit") == "Add", repr((status, body, rows)))
        wait_answer(other, "→ 503")
        checks.result("second-page-sees-the-edit", "503" in other.evaluate(ROWS)[1]["answer"], "")

        page.click("#tab-flows")
        record(options.proxy, base + "/logo.png")
        open_flow(page, "/logo.png")
        page.keyboard.press("Shift+M")
        page.wait_for_function("() => !document.getElementById('view-rules').hidden"
                               " && document.getElementById('rule-text').value.includes('logo')", timeout=10000)
        form = page.evaluate(FORM)
        checks.result("binary-form", form["binary"] is not None
                      and ("binary body, %d bytes: sent as recorded" % len(IMAGE)) in form["binary"]
                      and not form["bodyShown"] and form["type"] == "image/png", repr(form))
        page.click("#rule-submit")
        page.wait_for_function("() => document.querySelectorAll('rules-panel tbody tr').length === 3", timeout=10000)
        status, headers, body = curl(options.proxy, base + "/logo.png")
        checks.result("binary-exact-bytes", status == 200 and hashlib.sha256(body).hexdigest()
                      == hashlib.sha256(IMAGE).hexdigest() and "Content-Length: %d" % len(IMAGE) in headers
                      and "mock rule" in headers, repr((status, headers, len(body))))

        # A body past a mock's 1 MiB is left to type; a flow without a response fills what it has.
        page.click("#tab-flows")
        record(options.proxy, base + "/big.txt")
        open_flow(page, "/big.txt")
        page.click("#mock-from-flow")
        page.wait_for_function("() => document.getElementById('rule-text').value.includes('big')", timeout=10000)
        form = page.evaluate(FORM)
        checks.result("big-body-left-to-type", form["body"] == "" and form["binary"] is None
                      and "1,048,577 bytes, over a mock's 1 MiB" in form["note"], repr(form))
        page.click("#tab-flows")
        # The client gives up before the origin answers: the flow ends without a response.
        subprocess.run(["curl", "-sS", "--max-time", "1", "-x", options.proxy, base + "/slow"], capture_output=True,
                       timeout=20)
        open_flow(page, "/slow")
        page.click("#mock-from-flow")
        page.wait_for_function("() => document.getElementById('rule-text').value.includes('slow')", timeout=10000)
        form = page.evaluate(FORM)
        wanted = "|~m GET|^%s/slow(\\?.*)?$" % base.replace(".", "\\.")
        checks.result("no-response-fills-what-it-has", form["text"] == wanted and form["status"] == "200"
                      and form["body"] == "" and "no response was recorded" in form["note"],
                      repr(form))
        # A response a page on another origin read by its CORS headers: the note says the mock will
        # not send them (a mock has a status, a type and a body), so that page cannot read the mock.
        page.click("#tab-flows")
        record(options.proxy, base + "/api/cors")
        open_flow(page, "/api/cors")
        page.click("#mock-from-flow")
        page.wait_for_function("() => document.getElementById('rule-text').value.includes('cors')", timeout=10000)
        form = page.evaluate(FORM)
        checks.result("mock-note-says-cors-is-not-sent", "Access-Control-Allow-Origin: https://shop.example.test"
                      in form["note"] and "not sent" in form["note"], repr(form["note"]))

        running_flows(page, options.proxy, base, checks)

        checks.result("no-page-errors", not problems and not other_problems
                      and not page.evaluate("window.__violations"),
                      repr((problems, other_problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


def running_flows(page, proxy, base, checks):
    """Mock… on flows still running, as Proxyman and Charles map a pending request: a long poll
    whose head came (202, JSON) fills its method, URL regex, status and type, with an empty body
    and a note that the response is still arriving, and the saved mock answers the next request at
    once; one still waiting for its head fills status 200 and says it waits; an event stream's
    record so far gives its events until now as the body."""
    page.click("#tab-flows")
    clients = [subprocess.Popen(["curl", "-sS", "--max-time", "25", "-x", proxy, base + path],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for path in ("/hang", "/wait-head", "/events")]
    try:
        open_flow(page, "/hang")
        page.wait_for_function("() => document.querySelector('flow-detail .detail-status')?.textContent"
                               ".startsWith('202')", timeout=10000)
        button = page.evaluate("() => { const b = document.querySelector('flow-detail .running-actions"
                               " #mock-from-flow'); return b && !b.disabled; }")
        page.click("#mock-from-flow")
        page.wait_for_function("() => document.getElementById('rule-text').value.includes('hang')", timeout=10000)
        form = page.evaluate(FORM)
        checks.result("running-flow-mock-form", button and form["kind"] == "mock"
                      and form["text"] == "|~m GET|^%s/hang(\\?.*)?$" % base.replace(".", "\\.")
                      and form["status"] == "202" and form["type"] == "application/json" and form["body"] == ""
                      and "the response is still arriving" in form["note"], repr((button, form)))
        page.fill("#mock-body", '{"mocked": true}')
        page.click("#rule-submit")
        page.wait_for_function("() => [...document.querySelectorAll('rules-panel .rule-text')]"
                               ".some((t) => t.textContent.includes('hang'))", timeout=10000)
        started = time.monotonic()
        status, headers, body = curl(proxy, base + "/hang?next=1")
        checks.result("running-flow-mock-answers", status == 202 and body == b'{"mocked": true}'
                      and "mock rule" in headers and time.monotonic() - started < 5,
                      repr((status, headers, body)))

        page.click("#tab-flows")
        # The mocked request's row first: it comes in above the others, and a click on a row while
        # the rows move can land on the one that moved under the pointer.
        page.wait_for_function("() => [...document.querySelectorAll('flow-list .flow-row[data-id] .c-path')]"
                               ".some((p) => p.textContent.startsWith('/hang?next'))", timeout=10000)
        open_flow(page, "/wait-head")
        button = page.evaluate("() => Boolean(document.querySelector('flow-detail .running-actions #mock-from-flow'))")
        page.click("#mock-from-flow")
        page.wait_for_function("() => document.getElementById('rule-text').value.includes('wait-head')",
                               timeout=10000)
        form = page.evaluate(FORM)
        checks.result("waiting-flow-mock-form", button and form["status"] == "200" and form["body"] == ""
                      and "still waits for its response" in form["note"], repr((button, form)))

        # A stream's record so far (its events until now): the mock takes the body so far.
        page.click("#tab-flows")
        open_flow(page, "/events")
        page.wait_for_function("() => document.querySelector('flow-detail .pending-note')", timeout=10000)
        page.click("#mock-from-flow")
        page.wait_for_function("() => document.getElementById('rule-text').value.includes('events')", timeout=10000)
        form = page.evaluate(FORM)
        checks.result("stream-mock-takes-body-so-far", form["status"] == "200" and form["type"] == "text/event-stream"
                      and form["body"].startswith("data: 0\n\n") and "bytes of body so far" in form["note"],
                      repr(form))
    except Exception as error:
        pane = page.evaluate("() => document.querySelector('flow-detail')?.innerText.slice(0, 400)")
        checks.result("running-flow-mock", False, "%s; the pane: %r" % (str(error).splitlines()[0], pane))
    finally:
        RELEASE.set()
        for client in clients:
            client.kill()
            client.wait(timeout=10)


if __name__ == "__main__":
    main()
