#!/usr/bin/env python3
"""The flow pane's request actions on flows still running (headless Chromium, Playwright with the
system browser), beside `devproxy run`: an origin served here holds the first request to each path
open until the checks are done (a long poll), and answers later ones at once with what it got.

- A POST long poll (its JSON body received whole, its answer awaited): Copy as curl copies its
  request, and the copied command, run with curl against the origin, sends the same method and body;
  Copy as ▾ → Python copies code with its body; Replay sends it again (a new flow, marked as a
  replay of it, appears and opens); the `r` key replays it too; Edit and resend opens with its
  method and body, and sends the edited body.
- An upload still in progress (a client sending its body slowly): Replay, Repeat…, Edit and resend,
  Copy as curl and Copy as ▾ are disabled, their tooltip saying the request is still being received;
  Copy URL is not.
- The API, with curl and the page's token: `GET /api/flows/ID/export?format=curl` and
  `POST /api/flows/ID/replay` answer 200 for the long poll, 409 with one line for the upload;
  `format=har` says the flow has not finished yet; `POST …/repeat` sends the long poll twice and
  refuses the upload; a held POST sent with `Expect: 100-continue`
  (its body after the origin's 100) is exported with its body.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_running_actions.py --ui URL --proxy http://127.0.0.1:PORT
"""
import http.server, json, os, shlex, socket, subprocess, sys, threading, time, urllib.parse

from browser_page import Checks, live_page, origin_and_chromium, ui_parser

# What the held requests wait for (at most 30 s): set when the checks are done.
RELEASE = threading.Event()
BODY = b'{"query": "status", "n": 1}'


class Origin(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen = {}
    last = {}
    lock = threading.Lock()

    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = self.path.split("?")[0]
        with Origin.lock:
            count = Origin.seen.get(path, 0)
            Origin.seen[path] = count + 1
            Origin.last[path] = body
        if count == 0:
            RELEASE.wait(30)
        reply = json.dumps({"method": self.command, "body": body.decode("latin-1"), "count": count}).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = answer
    do_POST = answer

    def handle(self):
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the slow upload's client is closed mid-body at the end, as it is meant to be

    def log_message(self, *arguments):
        pass


def slow_upload(proxy, url, stop):
    """A POST through the proxy whose 4000-byte body comes 10 bytes every 0.3 s until `stop`."""
    host, port = urllib.parse.urlsplit(proxy).hostname, urllib.parse.urlsplit(proxy).port
    connection = socket.create_connection((host, port), timeout=30)
    connection.sendall(("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: text/plain\r\nContent-Length: 4000\r\n\r\n"
                        % (url, urllib.parse.urlsplit(url).netloc)).encode())
    while not stop.wait(0.3):
        try:
            connection.sendall(b"0123456789")
        except OSError:
            break
    connection.close()


def api(ui, method, path, data=None):
    """curl against the web UI's API with its token (`data`: a JSON body): (status, body text)."""
    parts = urllib.parse.urlsplit(ui)
    token = urllib.parse.parse_qs(parts.query).get("token", [""])[0]
    body = ["-H", "Content-Type: application/json", "--data-binary", json.dumps(data)] if data is not None else []
    result = subprocess.run(["curl", "-sS", "--max-time", "10", "-X", method, "-w", "\n%{http_code}"] + body + [
                             "-H", "Authorization: Bearer " + token,
                             "%s://%s%s" % (parts.scheme, parts.netloc, path)],
                            capture_output=True, timeout=20, env=without_proxy())
    text, _, status = result.stdout.decode().rpartition("\n")
    return int(status or 0), text


def without_proxy():
    return {name: value for name, value in os.environ.items() if "proxy" not in name.lower()}


def clipboard(page):
    return page.evaluate("() => navigator.clipboard.readText()")


def copied(page, selector, notice):
    page.evaluate("() => { document.getElementById('notice').textContent = ''; }")
    page.click(selector)
    page.wait_for_function("n => document.getElementById('notice').textContent === n", arg=notice, timeout=10000)
    return clipboard(page)


ENABLED = """() => Object.fromEntries(['replay', 'repeat', 'resend', 'copy-curl', 'copy-as', 'copy-url'].map((id) => {
    const b = document.querySelector('flow-detail .running-actions #' + id);
    return [id, b ? [b.disabled, b.title] : null]; }))"""


def main():
    parser = ui_parser()
    options = parser.parse_args()
    checks = Checks()
    stop = threading.Event()
    clients = []
    with origin_and_chromium(http.server.ThreadingHTTPServer, Origin) as (browser, base, _):
        page, problems = live_page(browser, options.ui, clipboard=True)
        try:
            clients.append(subprocess.Popen(["curl", "-sS", "--max-time", "40", "-x", options.proxy,
                                             "-H", "Content-Type: application/json", "--data-binary", BODY.decode(),
                                             base + "/poll"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            # The same held POST sent with `Expect: 100-continue` (its body goes after the origin's 100).
            clients.append(subprocess.Popen(["curl", "-sS", "--max-time", "40", "-x", options.proxy,
                                             "-H", "Content-Type: application/json", "-H", "Expect: 100-continue",
                                             "--data-binary", BODY.decode(), base + "/poll-expect"],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            uploader = threading.Thread(target=slow_upload, args=(options.proxy, base + "/upload", stop), daemon=True)
            uploader.start()
            api_checks(options, checks)
            long_poll(page, options, base, checks)
            upload(page, options, checks)
        except Exception as error:
            pane = page.evaluate("() => document.querySelector('flow-detail')?.innerText.slice(0, 300)")
            rows = page.evaluate("() => [...document.querySelectorAll('flow-list .flow-row[data-id]')]"
                                 ".map((r) => r.querySelector('.c-path').textContent)")
            checks.result("running-actions", False, "%s; the pane: %r; rows %r"
                          % (str(error).splitlines()[0], pane, rows))
        finally:
            RELEASE.set()
            stop.set()
            for client in clients:
                client.kill()
                client.wait(timeout=10)
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


def running_id(ui, path):
    """The id of the first flow to `path` (not a replay) once it is listed, still running."""
    for _ in range(100):
        status, text = api(ui, "GET", "/api/flows?limit=50")
        flows = json.loads(text).get("flows", []) if status == 200 else []
        found = [f for f in flows if (f.get("url") or "").endswith(path) and not f.get("replay_of")
                 and f.get("phase") != "finished"]
        if found:
            return found[0]["id"]
        time.sleep(0.1)
    raise RuntimeError("no running flow to %s" % path)


def api_checks(options, checks):
    """curl on the API: the long poll's request (received whole) is exported and replayed (200), the
    upload's (its body still coming) refused with 409 and one line; HAR waits for the end."""
    poll = running_id(options.ui, "/poll")
    upload = running_id(options.ui, "/upload")
    time.sleep(1.2)  # the upload's record so far (its body arriving) is shown after its first second
    status, text = api(options.ui, "GET", "/api/flows/%s/export?format=curl" % poll)
    replayed, answer = api(options.ui, "POST", "/api/flows/%s/replay" % poll)
    har, har_text = api(options.ui, "GET", "/api/flows/%s/export?format=har" % poll)
    checks.result("api-running-complete", status == 200 and text.startswith("curl ") and BODY.decode() in text
                  and replayed == 200 and json.loads(answer).get("id") and har == 409
                  and "has not finished yet" in har_text, repr((status, text, replayed, answer, har, har_text)))
    expect = running_id(options.ui, "/poll-expect")
    status, text = api(options.ui, "GET", "/api/flows/%s/export?format=curl" % expect)
    checks.result("api-running-expect-continue", status == 200 and BODY.decode() in text, repr((status, text)))
    status, text = api(options.ui, "GET", "/api/flows/%s/export?format=curl" % upload)
    replayed, answer = api(options.ui, "POST", "/api/flows/%s/replay" % upload)
    repeated, repeat_answer = api(options.ui, "POST", "/api/flows/%s/repeat" % upload, {"count": 2})
    checks.result("api-running-upload-refused", status == 409 and "still being received" in text
                  and "\n" not in text.strip() and replayed == 409 and "still being received" in answer
                  and repeated == 409 and "still being received" in repeat_answer,
                  repr((status, text, replayed, answer, repeated, repeat_answer)))
    # Repeat… takes the long poll's request as Replay does: both sends reach the origin.
    before = Origin.seen.get("/poll", 0)
    repeated, repeat_answer = api(options.ui, "POST", "/api/flows/%s/repeat" % poll, {"count": 2})
    deadline = time.monotonic() + 10
    while Origin.seen.get("/poll", 0) < before + 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    checks.result("api-running-repeat", repeated == 202 and Origin.seen.get("/poll", 0) == before + 2
                  and Origin.last.get("/poll") == BODY, repr((repeated, repeat_answer, Origin.seen.get("/poll"))))


def open_id(page, flow):
    """Clicks flow `flow`'s row (its replays have its path) and waits for its running toolbar."""
    # A row that comes in above (a replay's) moves the rows: a click may land on another, and is
    # given again then.
    for attempt in range(5):
        page.wait_for_selector("flow-list .flow-row[data-id='%s']" % flow, timeout=10000)
        page.click("flow-list .flow-row[data-id='%s']" % flow)
        try:
            page.wait_for_function("p => document.querySelector('flow-list .flow-row.selected')"
                                   "?.getAttribute('data-id') === p", arg=flow, timeout=2000)
            break
        except Exception:
            if attempt == 4:
                raise
    page.wait_for_function("p => document.querySelector('flow-list .flow-row.selected')?.getAttribute('data-id') === p"
                           " && document.querySelector('flow-detail .running-actions')"
                           " && !document.querySelector('flow-detail').hasAttribute('aria-busy')", arg=flow, timeout=10000)


def long_poll(page, options, base, checks):
    poll = running_id(options.ui, "/poll")
    open_id(page, poll)
    page.wait_for_function("() => { const b = document.querySelector('flow-detail .running-actions #copy-curl');"
                           " return b && !b.disabled; }", timeout=10000)
    command = copied(page, "#copy-curl", "copied the curl command")
    # Run as copied (the shell reads it), against the origin itself: it sends the same request.
    result = subprocess.run(["sh", "-c", command.strip() + " -sS --max-time 10"], capture_output=True, timeout=20,
                            env=without_proxy())
    answer = json.loads(result.stdout or b"{}")
    checks.result("running-copy-curl", command.startswith("curl ") and base + "/poll" in command
                  and answer.get("method") == "POST" and answer.get("body") == BODY.decode()
                  and answer.get("count", 0) >= 1, repr((command, result.stdout, result.stderr)))

    page.click("#copy-as")
    page.wait_for_selector("#copy-as-menu [data-id='python']", state="visible", timeout=5000)
    python = copied(page, "#copy-as-menu [data-id='python']", "copied the Python code")
    checks.result("running-copy-as-python", "requests" in python and base + "/poll" in python
                  and '"query"' in python.replace("\\", ""), repr(python))

    before = Origin.seen.get("/poll", 0)
    page.click("flow-detail .running-actions #replay")
    page.wait_for_function("() => document.getElementById('notice').textContent.startsWith('replayed as flow')",
                           timeout=10000)
    new_id = page.evaluate("() => document.getElementById('notice').textContent.split(' ').pop()")
    # The new flow opens, as a finished flow's replay does: the pane shows it as a replay of the poll.
    page.wait_for_function("([n, o]) => { const d = document.querySelector('flow-detail');"
                           " return d.querySelector('.detail-status')?.textContent.includes('replay of ' + o)"
                           " && document.querySelector('flow-list .flow-row.selected')?.getAttribute('data-id') === n; }",
                           arg=[new_id, poll], timeout=10000)
    checks.result("running-replay", Origin.seen.get("/poll", 0) == before + 1 and new_id != poll,
                  "origin hits %d→%d, new flow %s" % (before, Origin.seen.get("/poll", 0), new_id))

    # The keyboard's `r` on the running flow replays it too.
    open_id(page, poll)
    page.evaluate("() => document.querySelector('flow-list .flow-viewport').focus()")
    before = Origin.seen.get("/poll", 0)
    page.evaluate("() => { document.getElementById('notice').textContent = ''; }")
    page.keyboard.press("r")
    page.wait_for_function("() => document.getElementById('notice').textContent.startsWith('replayed as flow')",
                           timeout=10000)
    key_id = page.evaluate("() => document.getElementById('notice').textContent.split(' ').pop()")
    # It opens too (its row selected once it is listed: a later click elsewhere would be undone then).
    page.wait_for_function("n => document.querySelector('flow-list .flow-row.selected')?.getAttribute('data-id') === n",
                           arg=key_id, timeout=10000)
    checks.result("running-replay-key", Origin.seen.get("/poll", 0) == before + 1 and key_id != poll,
                  "origin hits %d→%d, new flow %s" % (before, Origin.seen.get("/poll", 0), key_id))

    # Edit and resend: the dialog holds its body (received whole, plain text), edited and sent.
    open_id(page, poll)
    page.click("flow-detail .running-actions #resend")
    page.wait_for_selector("#resend-dialog textarea[name='body']", state="visible", timeout=10000)
    filled = page.evaluate("() => [document.querySelector('#resend-dialog input[name=method]').value,"
                           " document.querySelector('#resend-dialog textarea[name=body]').value]")
    page.fill("#resend-dialog textarea[name='body']", '{"query": "edited"}')
    page.evaluate("() => { document.getElementById('notice').textContent = ''; }")
    page.click("#resend-send")
    page.wait_for_function("() => document.getElementById('notice').textContent.startsWith('sent as flow')",
                           timeout=10000)
    sent = page.evaluate("() => document.getElementById('notice').textContent.split(' ').pop()")
    page.wait_for_function("n => document.querySelector('flow-list .flow-row.selected')?.getAttribute('data-id') === n",
                           arg=sent, timeout=10000)
    checks.result("running-edit-and-resend", filled == ["POST", BODY.decode()]
                  and Origin.last.get("/poll") == b'{"query": "edited"}', repr((filled, Origin.last.get("/poll"))))



def upload(page, options, checks):
    open_id(page, running_id(options.ui, "/upload"))
    states = page.evaluate(ENABLED)
    refused = [name for name in ("replay", "repeat", "resend", "copy-curl", "copy-as")
               if states.get(name) and states[name][0] and "still being received" in states[name][1]]
    checks.result("running-upload-disabled", len(refused) == 5 and states["copy-url"] and not states["copy-url"][0],
                  repr(states))


if __name__ == "__main__":
    main()
