#!/usr/bin/env python3
"""The web UI's page when the server is full (headless Chromium, Playwright with the system browser):
the server serves 64 connections at once and answers more with 503. Other readers of the live
stream (raw `GET /api/events` connections with the token, as scripts or many tabs hold them) fill
it while the page's tab is in the background; shown again, the page must say that the server is
full and try again, less often each time, and go live once there is room, where an EventSource
that got a 503 closed for good and the page said "disconnected".

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_full_server.py --ui URL --proxy http://127.0.0.1:PORT
"""
import socket, subprocess, sys, threading, time, urllib.parse

from browser_page import Checks, chromium, ui_context, ui_parser, watched_page
from webui_browser import HIDE, SHOW, STATE_IS

STATE = "() => document.getElementById('connection-state').textContent"


class Readers:
    """Live-stream readers of the UI at `ui` (its `web ui:` URL): `fill()` opens streams until the
    server answers 503 and keeps topping up from a thread, so a slot another connection frees is
    taken again; `release()` stops that and closes them all."""

    def __init__(self, ui):
        parts = urllib.parse.urlsplit(ui)
        self.address = (parts.hostname, parts.port)
        token = urllib.parse.parse_qs(parts.query)["token"][0]
        self.request = ("GET /api/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"
                        "Accept: text/event-stream\r\n\r\n" % (parts.netloc, token)).encode()
        self.open = []
        self.refused = []
        self.stopping = threading.Event()
        self.thread = None

    def one(self):
        """Opens one stream: True when the server answered 200, False for a 503 (its reason kept)."""
        sock = socket.create_connection(self.address, timeout=10)
        sock.sendall(self.request)
        head = b""
        while b"\r\n" not in head:
            chunk = sock.recv(4096)
            if not chunk:
                break
            head += chunk
        if head.startswith(b"HTTP/1.1 200"):
            self.open.append(sock)
            return True
        self.refused.append(head.decode("latin-1"))
        sock.close()
        return False

    def fill(self):
        while len(self.open) < 80 and self.one():
            pass
        self.thread = threading.Thread(target=self.top_up, daemon=True)
        self.thread.start()

    def top_up(self):
        while not self.stopping.wait(0.1):
            try:
                self.one()
            except OSError:
                pass

    def release(self):
        self.stopping.set()
        if self.thread:
            self.thread.join(5)
        for sock in self.open:
            sock.close()
        self.open = []


def main():
    parser = ui_parser()
    options = parser.parse_args()
    checks = Checks()
    readers = Readers(options.ui)
    with chromium() as browser:
        page, problems = watched_page(ui_context(browser, options.ui))
        attempts = []
        page.on("request", lambda request: "/api/events" in request.url and attempts.append(time.monotonic()))
        try:
            page.goto(options.ui)
            page.wait_for_function(STATE_IS, arg="live", timeout=10000)
            page.evaluate("() => import('/events.js').then(m => { m.liveEvents.hiddenRelease = 100; })")
            page.evaluate(HIDE)
            page.wait_for_function(STATE_IS, arg="paused", timeout=5000)
            readers.fill()
            checks.result("server-full-refuses", len(readers.open) >= 60 and any(
                head.startswith("HTTP/1.1 503") for head in readers.refused),
                "%d streams open, first refusal %r" % (len(readers.open), (readers.refused or [""])[0][:60]))
            before = len(attempts)
            page.evaluate(SHOW)
            page.wait_for_function("() => document.getElementById('connection-state').textContent"
                                   ".startsWith('server full: retrying in ')", timeout=10000)
            notice = page.text_content("#notice") or ""
            checks.result("full-said", "maximum of 64 connections" in notice and "tries again" in notice
                          and "lost DevProxy" not in notice, repr((page.evaluate(STATE), notice)))
            # Three tries past the first, each wait longer than the one before (1 s, 2 s, 4 s).
            deadline = time.monotonic() + 20
            while len(attempts) < before + 4 and time.monotonic() < deadline:
                page.wait_for_timeout(200)
            tries = attempts[before:]
            waits = [later - earlier for earlier, later in zip(tries, tries[1:])]
            checks.result("full-retried-with-backoff", len(waits) >= 3 and waits[0] >= 0.8
                          and all(later > earlier * 1.5 for earlier, later in zip(waits, waits[1:3])),
                          "waits %s" % ["%.1f" % wait for wait in waits])
        except Exception as error:
            checks.result("full-said", False, str(error).splitlines()[0])
        finally:
            readers.release()
        try:
            # The server sees a reader gone when it next writes to it: a flow makes every stream write.
            for number in range(3):
                subprocess.run(["curl", "-s", "-o", "/dev/null", "--max-time", "5", "-x", options.proxy,
                                "http://127.0.0.1:9/full-server/%d" % number], timeout=10)
                time.sleep(0.3)
            page.wait_for_function(STATE_IS, arg="live", timeout=45000)
            checks.result("live-again-once-room", "lost DevProxy" not in (page.text_content("#notice") or ""),
                          page.text_content("#notice"))
        except Exception as error:
            checks.result("live-again-once-room", False, "%s; state %r" % (str(error).splitlines()[0], page.evaluate(STATE)))
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
