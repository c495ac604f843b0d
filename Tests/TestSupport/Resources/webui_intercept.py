#!/usr/bin/env python3
"""Breakpoints in the web UI (headless Chromium, Playwright with the system browser), through a
proxy started with `--intercept '~u /never-held'`; the script serves an origin that echoes what it
got and makes requests with curl through the proxy.

Checks: the Intercept box shows the run's filter; a filter asking about a body (`~b x`, known when
no breakpoint decides) is refused with the server's reason beside the box; `~u /held/ & ~q` set with
Enter holds a curl POST (its request alone): its row is marked (‖, class `held`, `‖ request` in the
Status cell) and the top bar says `‖ 1 held · Resume all`; its pane shows the editor (method, URL,
header fields, body as text; a hostile header value as text); the body edited and Resume: curl gets
the origin's answer to the edited body, the row is no longer held and the Connection tab says
`held … resumed edited: body`; `x` aborts a held request (curl gets a 502 that says so); `A` resumes
two; `a` resumes with the editor's changed URL. Respond… answers a held POST with a response typed in
the page: a 204 with a body is refused with the server's reason, then curl gets the 418, header and
body typed, the origin never sees the request, and the Connection tab says `answered here: 418`.

Responses (`~u /held/response & ~s`, the response alone): a curl GET's response is held, its row
says `‖ response`; its pane shows the response's editor (status, header fields, body; no method or
URL); status and body edited, Resume says `Resume edited` and `a` sends them: curl gets the edited
status and body, and the Connection tab says `Response intercepted … resumed edited: status, body
(was 200)`; a binary body is said to go on unchanged while the status is edited; a gzip body is
shown decoded, with the line that says so, and the text edited there reaches curl --compressed
gzip-coded again; `x` aborts a held
response (curl gets a 502 saying it was not delivered). Both phases (`~u /held/both`): one row held
at its request, then at its response, the pane's editor following. Enter on an empty box clears
the filter. No dialog, script error or CSP violation on the way.

`--only h2`: the caller started the proxy with `--intercept '(~u h2-held & ~q) | (~u h2-response &
~s)'` and made an HTTP/2 POST (curl --http2) to `/echo?h2-held` of its own origin and a GET to
`/echo?h2-response`; the check finds the first held, its editor showing HTTP/2 and the header names
as sent (lower case), edits the body and resumes it; then the second's response held, its editor
showing the status and the header names as the client would get them, and sets status 202 and a
body (the caller reads what curl got).

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_intercept.py --ui URL --proxy http://127.0.0.1:PORT [--only h2]
"""
import http.server, json, subprocess, sys, threading

from browser_page import Checks, glyph_drawn, live_page, origin_and_chromium, ui_parser
from webui_browser import open_flow

HOSTILE = "<img src=x onerror=alert(1)>"
# Not UTF-8: the response editor cannot show it as text, and sends it on unchanged.
BINARY = bytes([0xFF, 0xFE, 0x00, 0x41, 0x80])


# Every path the origin was asked for.
SEEN = []


class Echo(http.server.BaseHTTPRequestHandler):
    """Answers every request with what it got: method, path and body, as JSON."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self):
        SEEN.append(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        data = json.dumps({"method": self.command, "path": self.path, "body": body}).encode()
        binary = "binary" in self.path
        if binary:
            data = BINARY
        self.send_response(200)
        if "gzip" in self.path:
            import gzip
            data = gzip.compress(data)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Type", "application/octet-stream" if binary else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = answer


class Curl:
    """curl through the proxy (HTTP/1.1), in a thread: the request waits at the breakpoint meanwhile.
    `binary`: the answer's bytes, as hex, before the status."""

    def __init__(self, proxy, url, data=None, headers=(), binary=False, compressed=False):
        arguments = ["curl", "-sS", "--http1.1", "--max-time", "60", "--proxy", proxy, "-w", "\n%{http_code}"]
        if compressed:
            arguments.append("--compressed")
        self.binary = binary
        for header in headers:
            arguments += ["-H", header]
        if data is not None:
            arguments += ["--data-binary", data]
        self.result = None
        self.thread = threading.Thread(target=self.run, args=(arguments + [url],), daemon=True)
        self.thread.start()

    def run(self, arguments):
        done = subprocess.run(arguments, capture_output=True, timeout=90)
        body, _, status = done.stdout.rpartition(b"\n")
        text = body.hex() if self.binary else body.decode("utf-8", "replace")
        self.result = text + "\n" + status.decode() + done.stderr.decode("utf-8", "replace")

    def wait(self, timeout=30):
        self.thread.join(timeout)
        return self.result or ""


def held_row(page, path, held=True, timeout=15000):
    """Waits until the row of `path` is (or is no longer) marked held; returns its id."""
    page.wait_for_function("""([p, held]) => [...document.querySelectorAll('flow-list .flow-row[data-id]')]
        .some((r) => r.querySelector('.c-path').textContent === p && r.classList.contains('held') === held
            && (r.querySelector('.c-marks').textContent.includes('‖') === held))""",
                           arg=[path, held], timeout=timeout)
    return page.evaluate("""(p) => [...document.querySelectorAll('flow-list .flow-row[data-id]')]
        .find((r) => r.querySelector('.c-path').textContent === p).getAttribute('data-id')""", path)


def set_intercept(page, text):
    page.fill("#intercept-filter", text)
    page.press("#intercept-filter", "Enter")


def set_filter(page, text):
    """Sets the Intercept filter in the box and waits until the board has it."""
    set_intercept(page, text)
    page.wait_for_function("async (f) => (await (await fetch('/api/intercept')).json()).filter === f", arg=text,
                           timeout=10000)


def status_cell(page, path):
    """The Status cell's text in the newest row of `path`."""
    return page.evaluate("""(p) => [...document.querySelectorAll('flow-list .flow-row[data-id]')]
        .find((r) => r.querySelector('.c-path').textContent === p).querySelector('.c-status').textContent""", path)


def connection_fact(page, name):
    """The open flow's Connection tab's fact `name` (`Intercepted`), or None."""
    page.wait_for_selector("flow-detail #detail-tab-connection", timeout=15000)
    page.click("#detail-tab-connection")
    facts = page.evaluate("""(name) => {
        const dt = [...document.querySelectorAll('flow-detail .connection dt')].find((t) => t.textContent === name);
        return dt ? dt.nextElementSibling.textContent : null;
    }""", name)
    page.click("#detail-tab-request")
    return facts


def main():
    parser = ui_parser()
    parser.add_argument("--only")
    options = parser.parse_args()
    checks = Checks()
    with origin_and_chromium(http.server.ThreadingHTTPServer, Echo) as (browser, base, _):
        page, problems = live_page(browser, options.ui)
        try:
            if options.only == "h2":
                held_http2(page, checks)
            else:
                run(page, options, base, checks)
        except Exception as error:
            checks.result("intercept-checks", False, str(error).splitlines()[0])
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


def held_http2(page, checks):
    """An HTTP/2 stream the caller's curl made, held: the editor shows it as sent; its body edited."""
    held_row(page, "/echo?h2-held")
    open_flow(page, "/echo?h2-held")
    page.wait_for_selector("flow-detail #intercept-body", timeout=10000)
    headers = page.input_value("#intercept-headers").split("\n")
    facts = page.text_content("flow-detail .intercept-facts")
    checks.result("h2-editor-shows-stream", facts.startswith("HTTP/2 ") and "user-agent: curl" in [
        line[:len("user-agent: curl")] for line in headers] and page.input_value("#intercept-body") == "x=1"
                  and not any(line.startswith(":") for line in headers), repr((facts, headers)))
    page.fill("#intercept-body", "x=2&h2=edited")
    page.click("#intercept-resume")
    held_row(page, "/echo?h2-held", held=False)
    checks.result("h2-resumed", True, "the row is no longer held")

    # Another stream's response held: the editor shows it as the HTTP/2 client would get it.
    held_row(page, "/echo?h2-response")
    open_flow(page, "/echo?h2-response")
    page.wait_for_selector("flow-detail #intercept-status", timeout=10000)
    headers = page.input_value("#intercept-headers").split("\n")
    facts = page.text_content("flow-detail .intercept-facts")
    checks.result("h2-response-editor-shows-response", facts.startswith("HTTP/2 ")
                  and page.input_value("#intercept-status") == "200" and "content-type: application/json" in headers
                  and not any(line.startswith(":") for line in headers)
                  and '"http_version": "2"' in page.input_value("#intercept-body"), repr((facts, headers)))
    page.fill("#intercept-status", "202")
    page.fill("#intercept-body", '{"edited": "over h2"}')
    page.click("#intercept-resume")
    held_row(page, "/echo?h2-response", held=False)
    checks.result("h2-response-resumed", True, "the row is no longer held")


def run(page, options, base, checks):
    page.wait_for_selector("intercept-box:not([hidden])", timeout=10000)
    shown = page.input_value("#intercept-filter")
    checks.result("intercept-box-shows-filter", shown == "~u /never-held", repr(shown))

    set_intercept(page, "~b x")
    page.wait_for_selector("#intercept-error:not([hidden])", timeout=10000)
    said = page.text_content("#intercept-error")
    board = page.evaluate("async () => (await fetch('/api/intercept')).json()")
    checks.result("intercept-refused-filter-said", "~b is not known when a breakpoint decides" in said
                  and board["filter"] == "~u /never-held"
                  and page.get_attribute("#intercept-filter", "aria-invalid") == "true", repr((said, board)))

    set_filter(page, "~u /held/ & ~q")
    page.wait_for_selector("#intercept-error[hidden]", state="attached", timeout=5000)

    # A POST held; its body edited in the pane and resumed.
    post = Curl(options.proxy, base + "/held/echo", data="name=ana", headers=("X-Note: " + HOSTILE,))
    held_row(page, "/held/echo")
    page.wait_for_function("() => document.getElementById('intercept-resume-all')?.textContent === "
                           "'‖ 1 held · Resume all' && !document.getElementById('intercept-resume-all').hidden",
                           timeout=10000)
    status = status_cell(page, "/held/echo")
    checks.result("row-marked-held", status == "‖ request",
                  "‖ in the first column, ‖ 1 held · Resume all in the top bar; status %r" % status)
    # The mark is drawn, not a missing glyph's box: ⏸ (U+23F8) was in no font a plain Linux has
    # (DejaVu), so the row, the top bar and the pane showed a box. Drawn in the row's font on a
    # canvas, it must differ from a character no font has.
    drawn = glyph_drawn(page, "document.querySelector('flow-list .flow-row.held .c-marks')")
    checks.result("held-mark-drawn", drawn[2], repr(drawn))
    open_flow(page, "/held/echo")
    page.wait_for_selector("flow-detail #intercept-body", timeout=10000)
    headers = page.input_value("#intercept-headers")
    checks.result("editor-shows-request", page.input_value("#intercept-method") == "POST"
                  and page.input_value("#intercept-url") == base + "/held/echo"
                  and page.input_value("#intercept-body") == "name=ana"
                  and "X-Note: " + HOSTILE in headers
                  and not page.query_selector("flow-detail img"), repr(headers))
    page.fill("#intercept-body", "name=bea&edited=1")
    page.click("#intercept-resume")
    answer = post.wait()
    checks.result("resumed-edited-body-reaches-origin", '"body": "name=bea&edited=1"' in answer
                  and '"method": "POST"' in answer and answer.rstrip().endswith("200"), repr(answer))
    held_row(page, "/held/echo", held=False)
    page.wait_for_function("() => !document.querySelector('flow-detail #intercept-body')"
                           " && document.querySelector('flow-detail #detail-tab-connection')", timeout=15000)
    page.click("#detail-tab-connection")
    facts = page.evaluate("""() => {
        const dt = [...document.querySelectorAll('flow-detail .connection dt')]
            .find((t) => t.textContent === 'Intercepted');
        return dt ? dt.nextElementSibling.textContent : null;
    }""")
    checks.result("row-no-longer-held", page.evaluate("() => document.getElementById('intercept-resume-all').hidden")
                  is True, "the row and the top bar are back to normal")
    checks.result("intercept-facts-shown",
                  facts is not None and "at a breakpoint (~u /held/ & ~q), resumed edited: body" in facts, repr(facts))
    page.click("#detail-tab-request")

    # `x` aborts the selected held request: its client gets the 502.
    aborted = Curl(options.proxy, base + "/held/abort")
    held_row(page, "/held/abort")
    open_flow(page, "/held/abort")
    page.wait_for_selector("flow-detail #intercept-resume", timeout=10000)
    page.focus("flow-list .flow-viewport")
    page.keyboard.press("x")
    answer = aborted.wait()
    checks.result("abort-key-502", answer.rstrip().endswith("502") and "aborted at a breakpoint" in answer,
                  repr(answer))
    held_row(page, "/held/abort", held=False)

    # `A` resumes every held request.
    both = [Curl(options.proxy, base + "/held/all-%d" % n) for n in (1, 2)]
    for n in (1, 2):
        held_row(page, "/held/all-%d" % n)
    page.wait_for_function("() => document.getElementById('intercept-resume-all').textContent.startsWith('‖ 2 held')",
                           timeout=10000)
    page.focus("flow-list .flow-viewport")
    page.keyboard.press("Shift+A")
    answers = [curl.wait() for curl in both]
    checks.result("resume-all-key", all(a.rstrip().endswith("200") and '"path": "/held/all-' in a for a in answers),
                  repr(answers))

    # `a` resumes the selected one with the editor's changes (the URL here).
    moved = Curl(options.proxy, base + "/held/key-a")
    held_row(page, "/held/key-a")
    open_flow(page, "/held/key-a")
    page.wait_for_selector("flow-detail #intercept-url", timeout=10000)
    page.fill("#intercept-url", base + "/held/key-a-moved?x=1")
    page.focus("flow-list .flow-viewport")
    page.keyboard.press("a")
    answer = moved.wait()
    checks.result("resume-key-sends-edits", '"path": "/held/key-a-moved?x=1"' in answer
                  and answer.rstrip().endswith("200"), repr(answer))

    # Respond…: the held request is answered with what is typed in the page, never sent upstream.
    typed = Curl(options.proxy, base + "/held/respond", data="x=1")
    held_row(page, "/held/respond")
    open_flow(page, "/held/respond")
    page.wait_for_selector("flow-detail #intercept-respond", timeout=10000)
    page.click("#intercept-respond")
    page.fill("#intercept-respond-status", "204")
    page.fill("#intercept-respond-body", "no body for a 204")
    page.click("#intercept-respond-send")
    page.wait_for_selector("flow-detail #intercept-edit-error:not([hidden])", timeout=10000)
    refused = page.text_content("flow-detail #intercept-edit-error")
    page.fill("#intercept-respond-status", "418")
    page.fill("#intercept-respond-headers", "Content-Type: text/plain\nX-Typed: " + HOSTILE)
    page.fill("#intercept-respond-body", "typed in the page")
    page.click("#intercept-respond-send")
    answer = typed.wait()
    held_row(page, "/held/respond", held=False)
    page.wait_for_function("() => !document.querySelector('flow-detail #intercept-respond')", timeout=15000)
    facts = connection_fact(page, "Intercepted")
    checks.result("respond-directly", refused.startswith("body: a 204 response carries no body")
                  and answer == "typed in the page\n418" and "/held/respond" not in SEEN
                  and facts is not None and "at a breakpoint (~u /held/ & ~q), answered here: 418" in facts,
                  repr((refused, answer, facts, SEEN)))

    responses(page, options, base, checks)

    set_intercept(page, "")
    page.wait_for_function("async () => (await (await fetch('/api/intercept')).json()).filter === null", timeout=10000)
    free = Curl(options.proxy, base + "/held/free")
    answer = free.wait()
    checks.result("intercept-cleared", answer.rstrip().endswith("200"), repr(answer))


def responses(page, options, base, checks):
    """Response breakpoints: held, shown, edited (status and body) and resumed with `a`, aborted with
    `x`; a binary body goes on unchanged; both phases of one flow, one after the other."""
    set_filter(page, "~u /held/response & ~s")
    got = Curl(options.proxy, base + "/held/response", headers=("X-Note: " + HOSTILE,))
    held_row(page, "/held/response")
    status = status_cell(page, "/held/response")
    row_class = page.evaluate("""() => [...document.querySelectorAll('flow-list .flow-row[data-id]')]
        .find((r) => r.querySelector('.c-path').textContent === '/held/response').className""")
    checks.result("response-row-marked-held", status == "‖ response" and "held-response" in row_class,
                  repr((status, row_class)))
    open_flow(page, "/held/response")
    page.wait_for_selector("flow-detail #intercept-status", timeout=10000)
    headers = page.input_value("#intercept-headers")
    body = page.input_value("#intercept-body")
    note = page.text_content("flow-detail .held-note")
    checks.result("response-editor-shows-response", page.input_value("#intercept-status") == "200"
                  and "Content-Type: application/json" in headers and '"path": "/held/response"' in body
                  and HOSTILE not in headers and not page.query_selector("flow-detail #intercept-method")
                  and not page.query_selector("flow-detail #intercept-url")
                  and "response held at a breakpoint: the origin answered 200" in note
                  and page.text_content("#intercept-resume") == "Resume", repr((headers, body, note)))
    page.fill("#intercept-status", "418")
    page.fill("#intercept-body", "edited in the page <b>not markup</b>")
    label = page.text_content("#intercept-resume")
    # The filter changed meanwhile: what is held stays held, a response still, its edits in progress kept.
    set_filter(page, "~u /held/response & ~s & ~m GET")
    page.wait_for_function("() => document.getElementById('intercept-filter').getAttribute('aria-label')"
                           " === 'Intercept filter, holding ~u /held/response & ~s & ~m GET'", timeout=10000)
    page.wait_for_timeout(300)
    status = status_cell(page, "/held/response")
    checks.result("response-survives-filter-change", status == "‖ response"
                  and page.input_value("#intercept-status") == "418"
                  and page.input_value("#intercept-body") == "edited in the page <b>not markup</b>", repr(status))
    page.focus("flow-list .flow-viewport")
    page.keyboard.press("a")
    answer = got.wait()
    checks.result("response-resumed-edited-reaches-client", label == "Resume edited"
                  and answer.rstrip().endswith("418") and answer.startswith("edited in the page <b>not markup</b>\n"),
                  repr((label, answer)))
    held_row(page, "/held/response", held=False)
    page.wait_for_function("() => !document.querySelector('flow-detail #intercept-status')", timeout=15000)
    facts = connection_fact(page, "Response intercepted")
    checks.result("response-intercept-facts-shown", facts is not None
                  and "at a breakpoint (~u /held/response & ~s), resumed edited: status, body (was 200)" in facts
                  and not page.query_selector("flow-detail b"), repr(facts))

    # A body that is not UTF-8 is said to go on as it came; the status edited alone.
    binary = Curl(options.proxy, base + "/held/response-binary", binary=True)
    held_row(page, "/held/response-binary")
    open_flow(page, "/held/response-binary")
    page.wait_for_selector("flow-detail #intercept-status", timeout=10000)
    said = page.text_content("flow-detail .intercept-binary")
    page.fill("#intercept-status", "203")
    page.click("#intercept-resume")
    answer = binary.wait()
    checks.result("response-binary-body-unchanged", not page.query_selector("flow-detail #intercept-body")
                  and said == "binary body, %d bytes: sent unchanged" % len(BINARY)
                  and answer.startswith(BINARY.hex() + "\n") and answer.rstrip().endswith("203"), repr((said, answer)))

    # A gzip body is shown decoded (mitmproxy's message.text), and the edit goes gzip-coded again.
    coded = Curl(options.proxy, base + "/held/response-gzip", compressed=True)
    held_row(page, "/held/response-gzip")
    open_flow(page, "/held/response-gzip")
    page.wait_for_selector("flow-detail #intercept-body", timeout=10000)
    shown = page.input_value("#intercept-body")
    line = page.text_content("flow-detail #intercept-coding")
    page.fill("#intercept-body", '{"edited": "decoded"}')
    page.click("#intercept-resume")
    answer = coded.wait()
    checks.result("response-gzip-shown-decoded", '"path": "/held/response-gzip"' in shown
                  and line == "gzip: shown decoded, sent re-encoded as gzip"
                  and answer.startswith('{"edited": "decoded"}\n200'), repr((shown, line, answer)))

    # `x` aborts a held response: its client gets the 502.
    aborted = Curl(options.proxy, base + "/held/response-abort")
    held_row(page, "/held/response-abort")
    open_flow(page, "/held/response-abort")
    page.wait_for_selector("flow-detail #intercept-status", timeout=10000)
    page.focus("flow-list .flow-viewport")
    page.keyboard.press("x")
    answer = aborted.wait()
    checks.result("response-abort-key-502", answer.rstrip().endswith("502")
                  and "the origin's response was not delivered" in answer, repr(answer))
    held_row(page, "/held/response-abort", held=False)

    # Both phases: the request is held, then (resumed) its response, in the same row.
    set_filter(page, "~u /held/both")
    both = Curl(options.proxy, base + "/held/both", data="x=1")
    held_row(page, "/held/both")
    open_flow(page, "/held/both")
    page.wait_for_selector("flow-detail #intercept-method", timeout=10000)
    first = status_cell(page, "/held/both")
    page.fill("#intercept-body", "x=2")
    page.click("#intercept-resume")
    page.wait_for_selector("flow-detail #intercept-status", timeout=15000)
    second = status_cell(page, "/held/both")
    body = page.input_value("#intercept-body")
    page.click("#intercept-resume")
    answer = both.wait()
    checks.result("both-phases-one-row", first == "‖ request" and second == "‖ response"
                  and '"body": "x=2"' in body and '"body": "x=2"' in answer and answer.rstrip().endswith("200"),
                  repr((first, second, body, answer)))


if __name__ == "__main__":
    main()
