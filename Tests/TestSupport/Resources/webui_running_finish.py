#!/usr/bin/env python3
"""A running HTTP/2 flow's pane as the flow ends (headless Chromium, Playwright with the system
browser), beside `devproxy run --lazy-upstream --insecure-upstream` (an HTTP/2 client gets h2 from
the proxy whatever the origin speaks; the origin's certificate is the script's own, self-signed).

An HTTPS origin served here answers `/finish-N-RUN` with its head and half its body, then holds
the rest until the script lets it go. curl (`--http2`) asks for it through the proxy; the page
opens the flow while it runs, and the script lets the origin finish just after one of the pane's
half-second refreshes. The live stream tells of a flow only once the store has committed it, so
when it says the selected flow finished, the pane must fetch it at once (`pane-fetches-on-finish`:
its next `GET /api/flows/ID` starts within 150 ms of that message) and show the finished view
(HAR, Raw, Compare): before, it waited for its next refresh, up to half a second later. Three
flows; the detail of each check gives the times (ms after the message: the fetch's start, the
finished view).

Then five HTTP/2 uploads (`curl -T -`, the body written in two parts, the second 0 to 0.4 s after a
pane refresh) opened while their body comes: Replay is disabled, and once the API says the request
is whole, the stream's next message about the flow makes the pane fetch it at once (within 20 ms),
unless a refresh enabled Replay first (`upload-replay-on-message-N`); it waited for the pane's next
refresh too, so that a refresh came first about one time in five.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_running_finish.py --ui URL --proxy http://127.0.0.1:PORT
"""
import http.server, json, os, ssl, subprocess, sys, tempfile, threading, time, urllib.parse

from browser_page import Checks, api_get, chromium, live_page, ui_parser
from webui_browser import open_flow

FLOWS = 3
# The paths name this run, so a proxy that served an earlier run's flows does not show those.
RUN = "r%d" % os.getpid()
RELEASE = [threading.Event() for _ in range(FLOWS)]


UPLOAD = b"u" * 4000
UPLOADED = threading.Event()


class Origin(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_PUT(self):
        """`/upload-RUN`: the body read, held until the check is done, then 204."""
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        UPLOADED.wait(30)
        self.send_response(204)
        self.end_headers()

    def do_GET(self):
        index = int(self.path.split("?")[0].split("-")[1])
        body = b"finished " * 200
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[:900])
        self.wfile.flush()
        RELEASE[index].wait(30)
        self.wfile.write(body[900:])
        self.wfile.flush()

    def log_message(self, *arguments):
        pass


def serve_origin(directory):
    """The origin on 127.0.0.1 port 0, over TLS with a self-signed certificate made here."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", directory + "/origin.key", "-out", directory + "/origin.pem", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
                   check=True, capture_output=True, timeout=30)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(directory + "/origin.pem", directory + "/origin.key")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# In the page: when the live stream says the selected flow finished (`flow-list`'s
# `selected-changed`, the list's summary then finished), the starts of the pane's fetches of the
# flow, and when the finished view (its HAR link) shows; all on the page's clock (ms).
WATCH = """(id) => {
    const list = document.querySelector('flow-list');
    const detail = document.querySelector('flow-detail');
    const seen = window.__finish = { event: 0, pane: 0 };
    // Capturing: at the list itself, before the pane's own listener (which may fetch at once).
    list.addEventListener('selected-changed', () => {
        if (!seen.event && list.summaryOf(id)?.phase === 'finished') seen.event = performance.now();
    }, { capture: true });
    new MutationObserver(() => {
        if (!seen.pane && detail.querySelector("a[href*='format=har']")) seen.pane = performance.now();
    }).observe(detail, { subtree: true, childList: true });
    // The fetches are read from the resource timings once the view showed (an observer is told
    // of them later); cleared here so that the browser's buffer (250) does not fill.
    performance.clearResourceTimings();
}"""
FETCHES = """(id) => performance.getEntriesByType('resource')
    .filter((entry) => new URL(entry.name).pathname === '/api/flows/' + encodeURIComponent(id))
    .map((entry) => entry.startTime)"""


def open_watched(page, path, probe, watch):
    """Opens the running flow `path` in the pane, reads `probe` (page JS) of it, has `watch` (page JS
    taking the flow's id) watch it, and returns once one of the pane's refreshes of it has finished:
    the flow's id and what `probe` said."""
    open_flow(page, path)
    flow = page.evaluate("() => document.querySelector('flow-list .flow-row.selected').dataset.id")
    probed = page.evaluate(probe)
    page.evaluate(watch, flow)
    with page.expect_request_finished(lambda request: request.url.split("?")[0].endswith("/api/flows/" + flow),
                                      timeout=5000):
        pass
    return flow, probed


def one_flow(page, options, checks, port, index):
    path = "/finish-%d-%s" % (index, RUN)
    client = subprocess.Popen(["curl", "-sS", "-k", "--http2", "--max-time", "40", "-o", "/dev/null",
                               "-w", "%{http_version}", "--proxy", options.proxy,
                               "https://localhost:%d%s" % (port, path)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        flow, running = open_watched(page, path, "() => !document.querySelector(\"flow-detail a[href*='format=har']\")",
                                     WATCH)
        # Let the origin finish just after one of the pane's refreshes of the running flow.
        RELEASE[index].set()
        page.wait_for_function("() => window.__finish.pane > 0 && window.__finish.event > 0", timeout=10000)
        seen = page.evaluate("() => window.__finish")
        after = [start for start in page.evaluate(FETCHES, flow) if start >= seen["event"] - 2]
        fetched = after[0] - seen["event"] if after else None
        shown = seen["pane"] - seen["event"]
        version = client.communicate(timeout=30)[0]
        checks.result("pane-fetches-on-finish-%d" % index,
                      running and version == "2" and fetched is not None and fetched < 150,
                      "fetch %s ms, finished view %.0f ms after the message (curl spoke HTTP/%s)"
                      % ("none" if fetched is None else "%.0f" % fetched, shown, version))
    finally:
        RELEASE[index].set()
        if client.poll() is None:
            client.kill()
            client.wait()


# In the page: the times of the live stream's messages about flow `id` and when the pane's Replay
# button is enabled (ms since the epoch, to compare with the script's clock).
WATCH_REQUEST = """(id) => {
    const list = document.querySelector('flow-list');
    const detail = document.querySelector('flow-detail');
    const seen = window.__request = { messages: [], enabled: 0 };
    performance.clearResourceTimings();
    list.addEventListener('selected-changed', () => {
        if (store_selected() === id) seen.messages.push(Date.now());
    }, { capture: true });
    function store_selected() { return document.querySelector('flow-list .flow-row.selected')?.dataset.id; }
    new MutationObserver(() => {
        const replay = detail.querySelector('#replay');
        if (!seen.enabled && replay && !replay.disabled) seen.enabled = Date.now();
    }).observe(detail, { subtree: true, childList: true, attributes: true });
}"""


def complete_at(ui, flow, found, stop):
    """Asks `GET /api/flows/ID` every 5 ms until it says the request is whole; puts the time in `found`."""
    while not stop.is_set():
        answer = json.loads(api_get(ui, "/api/flows/" + urllib.parse.quote(flow)))
        if answer.get("request_complete") or not answer.get("pending"):
            found.append(time.time() * 1000)
            return
        time.sleep(0.005)


def upload(page, options, checks, port, index, delay):
    """An HTTP/2 upload open in the pane while its body comes, its rest sent `delay` s after one of
    the pane's refreshes: once the API says the request is whole, the stream's message of it (the
    first after that) makes the pane fetch the flow at once (within 20 ms), unless a refresh had
    enabled Replay already; it waited for the pane's next half-second refresh."""
    client = subprocess.Popen(["curl", "-sS", "-k", "--http2", "--max-time", "40", "-o", "/dev/null", "-T", "-",
                               "-H", "Content-Length: %d" % len(UPLOAD), "-w", "%{http_version}",
                               "--proxy", options.proxy, "https://localhost:%d/upload-%d-%s" % (port, index, RUN)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        client.stdin.write(UPLOAD[:1000])
        client.stdin.flush()
        flow, disabled = open_watched(page, "/upload-%d-%s" % (index, RUN),
                                      "() => document.querySelector('flow-detail #replay')?.disabled", WATCH_REQUEST)
        time.sleep(delay)
        found, stop = [], threading.Event()
        poll = threading.Thread(target=complete_at, args=(options.ui, flow, found, stop), daemon=True)
        poll.start()
        client.stdin.write(UPLOAD[1000:])
        client.stdin.close()
        page.wait_for_function("() => window.__request.enabled > 0", timeout=10000)
        poll.join(10)
        stop.set()
        seen = page.evaluate("() => window.__request")
        fetches = page.evaluate("(id) => (%s)(id).map((start) => performance.timeOrigin + start)" % FETCHES, flow)
        UPLOADED.set()
        # The message that told of the whole request (the first after the API said so), and the
        # fetch that brought Replay: started with the message, unless a refresh was there first.
        told = [time for time in seen["messages"] if found and time >= found[0] - 5]
        enabling = [start for start in fetches if start <= seen["enabled"]]
        late = None
        if told and seen["enabled"] > told[0]:
            late = enabling[-1] - told[0] if enabling else float("inf")
        client.wait(30)
        version = client.stdout.read().decode()
        base = found[0] if found else 0
        checks.result("upload-replay-on-message-%d" % index,
                      disabled is True and version == "2" and bool(found) and (late is None or late < 20),
                      "the fetch that enabled Replay started %s ms after the message (API whole at 0, messages at %s, "
                      "Replay at %.0f ms; curl HTTP/%s)"
                      % ("-" if late is None else "%.0f" % late, ", ".join("%.0f" % (t - base) for t in seen["messages"]),
                         seen["enabled"] - base, version))
    finally:
        UPLOADED.set()
        if client.poll() is None:
            client.kill()
            client.wait()


def main():
    options = ui_parser().parse_args()
    checks = Checks()
    with tempfile.TemporaryDirectory() as directory, chromium() as browser:
        origin = serve_origin(directory)
        try:
            page, problems = live_page(browser, options.ui)
            for index in range(FLOWS):
                try:
                    one_flow(page, options, checks, origin.server_address[1], index)
                except Exception as error:
                    checks.result("pane-fetches-on-finish-%d" % index, False, str(error).splitlines()[0])
            for index, delay in enumerate([0, 0.1, 0.2, 0.3, 0.4]):
                UPLOADED.clear()
                try:
                    upload(page, options, checks, origin.server_address[1], index, delay)
                except Exception as error:
                    checks.result("upload-replay-on-message-%d" % index, False, str(error).splitlines()[0])
            checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                          repr((problems, page.evaluate("window.__violations"))))
        finally:
            origin.shutdown()
            origin.server_close()
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
