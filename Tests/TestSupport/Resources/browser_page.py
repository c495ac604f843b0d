"""What the web UI's browser scripts (webui_browser.py, webui_bodies.py, webui_daily.py, …) share:
checks printed one a line, the system Chromium driven by Playwright (alone, or beside an origin the
script serves), and a page on the UI that records what must never happen on it (a dialog, a script
error, a CSP violation) and the long tasks that block its thread.
"""
import argparse, collections, contextlib, threading, time, urllib.parse, urllib.request

from playwright.sync_api import TimeoutError as PlaywrightTimeout, sync_playwright


def ui_parser():
    """The page scripts' arguments: `--ui URL` (the web UI's address with its token) and `--proxy
    URL` (the proxy beside it); a script adds its own to the parser."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--ui", required=True)
    parser.add_argument("--proxy", required=True)
    return parser


class Checks:
    """Prints `PASS name detail` or `FAIL name detail` a check; `failed` says whether one failed."""

    def __init__(self):
        self.failed = False

    def result(self, name, ok, detail=""):
        print(("PASS" if ok else "FAIL"), name, detail, flush=True)
        self.failed = self.failed or not ok


@contextlib.contextmanager
def chromium():
    """The system's headless Chromium (Debian's `chromium`; Playwright's own download is never used)."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                             args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def origin_and_chromium(server_class, handler):
    """An origin (`server_class`, an `http.server` server, with `handler`) on 127.0.0.1 port 0,
    serving from a thread, and the system's Chromium: yields `(browser, base, origin)`, `base` the
    origin's `http://127.0.0.1:PORT`. Both are stopped at the end."""
    origin = server_class(("127.0.0.1", 0), handler)
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    try:
        with chromium() as browser:
            yield browser, "http://127.0.0.1:%d" % origin.server_address[1], origin
    finally:
        origin.shutdown()
        origin.server_close()


def ui_context(browser, ui, width=1400, height=800):
    """A browser context whose relative URLs resolve against the UI's origin (`ui` is its URL)."""
    parts = urllib.parse.urlsplit(ui)
    return browser.new_context(viewport={"width": width, "height": height},
                               base_url="%s://%s" % (parts.scheme, parts.netloc))


def watched_page(context):
    """A new page of `context` and the list its problems go to: dialogs, console errors (failed
    loads aside: an invalid filter's 400 is a network log line) and page errors. In the page,
    `window.__violations` lists CSP violations and `window.__long` the long tasks (start, ms)."""
    page = context.new_page()
    problems = []
    page.on("dialog", lambda dialog: (problems.append("dialog: " + dialog.message), dialog.dismiss()))
    page.on("console", lambda message: message.type == "error" and not message.text.startswith(
        "Failed to load resource") and problems.append("console: " + message.text))
    page.on("pageerror", lambda error: problems.append("page error: %s" % error))
    # The page's last API calls, for `wait_or_explain`: method, path, status (or the failure) and
    # the milliseconds from request to its end.
    page.api_calls = collections.deque(maxlen=40)
    started = page.api_open = {}
    page.on("request", lambda request: started.__setitem__(request, time.monotonic()))

    def ended(request, outcome):
        path = urllib.parse.urlsplit(request.url).path
        began = started.pop(request, None)
        if path.startswith("/api/"):
            took = "%.0f ms" % ((time.monotonic() - began) * 1000) if began else "?"
            page.api_calls.append("%s %s %s %s" % (request.method, path, outcome, took))
    page.on("requestfinished", lambda request: ended(request, request.response().status
                                                     if request.response() else "no response"))
    page.on("requestfailed", lambda request: ended(request, "failed: %s" % request.failure))
    # Init scripts run through the DevTools protocol, outside the page's CSP.
    page.add_init_script("""
        window.__violations = [];
        document.addEventListener('securitypolicyviolation',
            (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
        window.__long = [];
        new PerformanceObserver((list) => {
            for (const e of list.getEntries()) window.__long.push({start: e.startTime, ms: e.duration});
        }).observe({type: 'longtask', buffered: true});
    """)
    return page, problems


def wait_or_explain(page, expression, state, arg=None, timeout=10000):
    """`page.wait_for_function(expression, arg)`; when it times out, an AssertionError that says
    what the page showed (`state`, a JavaScript function whose value is printed) and its last API
    calls (started, ended, status, time), so a wait that runs out under load says why."""
    try:
        page.wait_for_function(expression, arg=arg, timeout=timeout)
    except PlaywrightTimeout:
        shown = page.evaluate(state)
        calls = "\n    ".join(getattr(page, "api_calls", []))
        now = time.monotonic()
        still = ["%s %s open %.0f ms" % (request.method, urllib.parse.urlsplit(request.url).path, (now - began) * 1000)
                 for request, began in list(getattr(page, "api_open", {}).items())
                 if urllib.parse.urlsplit(request.url).path.startswith("/api/")]
        raise AssertionError("waited %d ms for %s; the page showed %r; its last API calls:\n    %s\n  still open: %s"
                             % (timeout, expression, shown, calls, still or "none")) from None


def live_page(browser, ui, width=1400, height=800, clipboard=False):
    """A watched page (`watched_page`) opened on the UI at `ui` (its `web ui:` URL) and following
    its live stream: the status bar says `live`; `clipboard`: the page may read and write the
    clipboard (the copy actions). Returns the page and its list of problems."""
    context = ui_context(browser, ui, width, height)
    if clipboard:
        context.grant_permissions(["clipboard-read", "clipboard-write"])
    page, problems = watched_page(context)
    page.goto(ui)
    page.wait_for_function("() => document.getElementById('connection-state').textContent === 'live'",
                           timeout=10000)
    return page, problems


def glyph_drawn(page, cell_js, text=None):
    """Whether `text` (the cell's own text when None) is drawn in the font of the cell `cell_js`
    (a JavaScript expression for the element) rather than as a missing glyph's box: drawn on a
    canvas, it must differ from a character no font has (U+10FFFD). Only DejaVu is on a plain
    Linux, and a mark it lacks (⏸) showed as a box. Returns [text, font, drawn]."""
    return page.evaluate("""([text]) => {
        const cell = %s;
        const shown = text ?? cell.textContent.trim();
        const font = getComputedStyle(cell).font;
        const draw = (what) => { const canvas = document.createElement('canvas'); canvas.width = 40;
            canvas.height = 30; const context = canvas.getContext('2d'); context.font = font;
            context.fillText(what, 4, 22); return canvas.toDataURL(); };
        return [shown, font, draw(shown) !== draw(String.fromCodePoint(0x10FFFD))]; }""" % cell_js, [text])


def mark_as_compare_base(page):
    """Marks the selected row (m) and makes it the comparison's base (c); once its Markers cell
    holds three markers, returns [their text, whether the cell shows them whole]."""
    page.evaluate("() => document.querySelector('flow-list .flow-viewport').focus()")
    page.keyboard.press("m")
    page.keyboard.press("c")
    page.wait_for_function("() => document.querySelector('flow-list .flow-row.selected .c-marks')"
                           ".textContent.split(/\\s/).length === 3", timeout=5000)
    return page.evaluate("""() => { const cell = document.querySelector('flow-list .flow-row.selected .c-marks');
        return [cell.textContent, cell.scrollWidth <= cell.clientWidth]; }""")


def api_get(ui, path):
    """`GET path` of the web UI's API at `ui` (its `web ui:` URL, whose token it sends), as bytes."""
    parts = urllib.parse.urlsplit(ui)
    token = urllib.parse.parse_qs(parts.query)["token"][0]
    request = urllib.request.Request("%s://%s%s" % (parts.scheme, parts.netloc, path),
                                     headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()
