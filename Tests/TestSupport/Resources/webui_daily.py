#!/usr/bin/env python3
"""The web UI as a daily driver uses it, in headless Chromium (Playwright with the system browser):
the list walked with the keyboard as in mitmweb and DevTools (PageDown / PageUp by a page, Home,
End to the oldest flow past the loaded pages); a flow's URL, a header's value, its body and its
curl command copied to the clipboard; the Host column beside the open pane shows an address
and port whole; a narrow window (480 px) with a flow open still shows
rows of the list above the detail pane; and the list's rows say what the summary knows: a tunnel's
Host cell names its port, and a flow that had 103 Early Hints is marked `103`. The proxy must run
with `--passthrough localhost` (the tunnel).

Starts its own origin (webui_browser.py's, on 127.0.0.1 port 0) and stops it at the end.
Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_daily.py --ui URL --proxy http://127.0.0.1:PORT
"""
import json, subprocess, sys, time

from browser_page import Checks, live_page, mark_as_compare_base, origin_and_chromium, ui_parser
from webui_browser import (Handler, Origin, ITEMS, curl, hints_origin, open_flow, requests_through, set_filter,
                           websocket_through)

# More than the list's first page (200 rows), so End has pages to load before it can select.
KEYBOARD_FLOWS = 260


def main():
    parser = ui_parser()
    parser.add_argument("--only")
    options = parser.parse_args()
    checks = Checks()
    with origin_and_chromium(Origin, Handler) as (browser, base, origin):
        page, problems = live_page(browser, options.ui, clipboard=True)
        stamp = int(time.time() * 1000)
        # --only NAME runs that one part (a quicker loop while working on it).
        parts = {"pressed-row": pressed_row_while_flows_arrive, "copying": copying,
                 "websocket": websocket_columns_one_line}
        if options.only in parts:
            parts[options.only](page, options, base, stamp, checks)
            sys.exit(1 if checks.failed else 0)
        keyboard(page, options, base, stamp, checks)
        copying(page, options, base, stamp, checks)
        tab_arrows(page, checks)
        host_whole(page, checks)
        narrow(page, checks)
        list_markers(page, options, base, origin, checks)
        refused_handshake_pane(page, options, origin, checks)
        resend_opens_what_it_sent(page, options, base, stamp, checks)
        websocket_columns_one_line(page, options, base, stamp, checks)
        pressed_row_while_flows_arrive(page, options, base, stamp, checks)
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


def selected(page):
    """The selected row's path and its index in the list (0 the newest), or None."""
    return page.evaluate("() => { const r = document.querySelector('flow-list .flow-row.selected');"
                         " return r ? [r.querySelector('.c-path').textContent, r.getAttribute('aria-rowindex') - 2]"
                         " : null; }")


def settle(page, index):
    """Waits (up to 5 s) until the list draws row `index` selected: it draws once a frame."""
    try:
        page.wait_for_function("n => { const r = document.querySelector('flow-list .flow-row.selected');"
                               " return r && Number(r.getAttribute('aria-rowindex')) - 2 === n; }", arg=index, timeout=5000)
    except Exception:
        pass


def keyboard(page, options, base, stamp, checks):
    """PageDown and PageUp move the selection by a page of rows, Home to the newest flow, and End
    to the oldest one, loading the pages below the first (260 flows; a page is 200)."""
    prefix = "/keys/%d/" % stamp
    requests_through(options.proxy, base, ["%s%03d" % (prefix, i) for i in range(KEYBOARD_FLOWS)])
    last = "%s%03d" % (prefix, KEYBOARD_FLOWS - 1)
    try:
        page.wait_for_function("p => document.querySelector('flow-list .flow-row[data-id] .c-path')?.textContent === p",
                               arg=last, timeout=20000)
        page.click("flow-list .flow-row[data-id] >> nth=0")
        page.wait_for_function("() => !document.querySelector('flow-detail').hidden", timeout=5000)
        rows = page.evaluate("() => document.querySelector('flow-list').pageRows")
        page.keyboard.press("PageDown")
        settle(page, rows)
        down = selected(page)
        page.keyboard.press("PageDown")
        settle(page, rows * 2)
        page.keyboard.press("PageUp")
        settle(page, rows)
        back = selected(page)
        checks.result("keyboard-page-down-up", rows > 5 and down and down[1] == rows and back and back[1] == rows,
                      "page of %r rows; PageDown: %r, PageDown PageUp: %r" % (rows, down, back))
        page.keyboard.press("End")
        # The oldest flow of the session: this check's first unless an earlier run used the proxy.
        total = page.evaluate("() => document.querySelector('flow-list').total")
        page.wait_for_function("n => { const r = document.querySelector('flow-list .flow-row.selected');"
                               " return r && Number(r.getAttribute('aria-rowindex')) - 2 === n - 1; }",
                               arg=total, timeout=20000)
        end = selected(page)
        count = page.evaluate("() => document.querySelector('flow-list').ids.length")
        page.keyboard.press("Home")
        settle(page, 0)
        home = selected(page)
        first = "%s000" % prefix
        checks.result("keyboard-home-end", end and (end[0] == first or total > KEYBOARD_FLOWS)
                      and count == total >= KEYBOARD_FLOWS and home == [last, 0],
                      "End: %r (%r of %r rows loaded), Home: %r" % (end, count, total, home))
    except Exception as error:
        checks.result("keyboard-home-end", False, "%s; selected %r" % (str(error).splitlines()[0], selected(page)))


def pressed_row_while_flows_arrive(page, options, base, stamp, checks):
    """A row pressed while the live list puts a new flow on top selects the flow it showed when
    pressed. A person's click holds the button ~100 ms, the live stream's batches come every 100 ms,
    and the list refills its pooled rows in place: the row under the pointer showed the flow below
    by the button's release, and that one was opened."""
    prefix = "/pressed/%d/" % stamp
    check = "pressed-row-selected"
    try:
        set_filter(page, "~u /pressed/%d/" % stamp)
        requests_through(options.proxy, base, [prefix + "seed-%d" % index for index in range(4)])
        page.wait_for_function("p => document.querySelector('flow-list .flow-row[data-id] .c-path')?.textContent === p",
                               arg=prefix + "seed-3", timeout=10000)
        page.keyboard.press("Escape")
        page.evaluate("() => { document.querySelector('flow-list .flow-viewport').scrollTop = 0; }")
        row = page.locator("flow-list .flow-row[data-id] >> nth=1")
        box = row.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        pressed = [row.get_attribute("data-id"), row.locator(".c-path").text_content()]
        page.mouse.move(x, y)
        page.mouse.down()
        requests_through(options.proxy, base, [prefix + "later"])
        # The button stays down until the row under the pointer shows another flow (the new one
        # pushed the rows down), as a person's press spans a live batch.
        page.wait_for_function("([x, y, id]) => document.elementFromPoint(x, y)?.closest('.flow-row')"
                               "?.getAttribute('data-id') !== id", arg=[x, y, pressed[0]], timeout=10000)
        page.mouse.up()
        page.wait_for_function("() => document.querySelector('flow-list .flow-row.selected')", timeout=5000)
        chosen = page.evaluate("() => { const r = document.querySelector('flow-list .flow-row.selected');"
                               " return [r.getAttribute('data-id'), r.querySelector('.c-path').textContent]; }")
        checks.result("pressed-row-selected", chosen == pressed, "pressed %r, selected %r" % (pressed, chosen))
        # A press dragged off the list (no click), then a script's click() on that row once it shows
        # another flow: the click selects what the row shows, not the flow the old press remembered.
        check = "scripted-click-selects-shown-row"
        page.keyboard.press("Escape")
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(5, 5)
        page.mouse.up()
        before = row.get_attribute("data-id")
        requests_through(options.proxy, base, [prefix + "after-drag"])
        page.wait_for_function("([x, y, id]) => document.elementFromPoint(x, y)?.closest('.flow-row')"
                               "?.getAttribute('data-id') !== id", arg=[x, y, before], timeout=10000)
        shown = page.evaluate("([x, y]) => { const r = document.elementFromPoint(x, y).closest('.flow-row');"
                              " r.click(); return r.getAttribute('data-id'); }", [x, y])
        page.wait_for_function("id => document.querySelector('flow-list .flow-row.selected')?.getAttribute('data-id') === id",
                               arg=shown, timeout=5000)
        checks.result("scripted-click-selects-shown-row", True, "row showed %r, selected" % shown)
    except Exception as error:
        checks.result(check, False, str(error).splitlines()[0])
    finally:
        page.keyboard.press("Escape")
        set_filter(page, "")


def body_downloads(page):
    """The download links beside the open pane's body, by their text."""
    return page.evaluate("() => [...document.querySelectorAll('flow-detail .body-actions a')].map(a => a.textContent)")


def clipboard(page):
    return page.evaluate("() => navigator.clipboard.readText()")


def copying(page, options, base, stamp, checks):
    """Copy URL, a header's value (the row's copy button), the response body (decoded from gzip)
    and the curl command each put that text on the clipboard."""
    path = "/items.json"
    url = base + path + "?copy=%d" % stamp
    requests_through(options.proxy, base, [path + "?copy=%d" % stamp])
    try:
        open_flow(page, path + "?copy=%d" % stamp)
        copied = {}
        page.click("#copy-url")
        page.wait_for_function("u => document.getElementById('notice').textContent === 'copied the URL'", arg=url)
        copied["url"] = clipboard(page)
        page.click("#detail-tab-response")
        row = page.locator("flow-detail table.headers tr", has=page.locator("th", has_text="Content-Type")).first
        row.hover()
        row.locator("button.copy").click()
        page.wait_for_function("() => document.getElementById('notice').textContent.startsWith('copied the value')")
        copied["header"] = clipboard(page)
        copied["header_cell"] = row.locator("td").text_content()
        page.click("flow-detail .body-copy")
        page.wait_for_function("() => document.getElementById('notice').textContent === 'copied the response body'")
        copied["body"] = clipboard(page)
        page.click("#copy-curl")
        page.wait_for_function("() => document.getElementById('notice').textContent === 'copied the curl command'")
        copied["curl"] = clipboard(page)
        coded_links = body_downloads(page)
        checks.result("copy-url", copied["url"] == url, repr(copied["url"]))
        checks.result("copy-header-value", copied["header"] == "application/json"
                      and copied["header_cell"] == "application/json", repr(copied))
        checks.result("copy-body", json.loads(copied["body"]) == ITEMS, repr(copied["body"][:200]))
        checks.result("copy-curl", copied["curl"].startswith("curl ") and url in copied["curl"], repr(copied["curl"]))
        copy_as_menu(page, url, checks)
        # A plain body's bytes are its decoding: one download, where a second "download decoded"
        # gave the same file; the gzip body above offers both.
        requests_through(options.proxy, base, ["/plain-%d" % stamp])
        open_flow(page, "/plain-%d" % stamp)
        page.click("#detail-tab-response")
        page.wait_for_selector("flow-detail .body-actions", timeout=5000)
        plain_links = body_downloads(page)
        checks.result("download-decoded-when-coded", coded_links == ["download", "download decoded"]
                      and plain_links == ["download"], repr((coded_links, plain_links)))
    except Exception as error:
        checks.result("copy-url", False, "%s; notice %r" % (str(error).splitlines()[0],
                                                              page.text_content("#notice")))


def copy_as_menu(page, url, checks):
    """"Copy as ▾" by keyboard alone: ArrowDown opens the menu on curl, three more reach Python,
    Enter copies it and closes the menu; Escape closes it again with the focus on the button (the
    pane stays open). ArrowUp opens it on the last item, Kotlin (OkHttp), which copies OkHttp 4's
    Kotlin code for the same URL."""
    try:
        page.focus("#copy-as")
        for key in ("ArrowDown", "ArrowDown", "ArrowDown", "ArrowDown"):
            page.keyboard.press(key)
        item = page.evaluate("() => document.activeElement?.textContent")
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.getElementById('notice').textContent === 'copied the Python code'")
        python = clipboard(page)
        closed = page.evaluate("() => document.getElementById('copy-as-menu').hidden")
        page.focus("#copy-as")
        page.keyboard.press("Enter")
        opened = page.evaluate("() => document.activeElement?.getAttribute('role')")
        page.keyboard.press("Escape")
        back = page.evaluate("() => [document.activeElement?.id, document.getElementById('copy-as-menu').hidden,"
                             " document.getElementById('copy-as').getAttribute('aria-expanded')]")
        page.keyboard.press("ArrowUp")
        last = page.evaluate("() => document.activeElement?.textContent")
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.getElementById('notice').textContent === 'copied the Kotlin code'")
        kotlin = clipboard(page)
        checks.result("copy-as-menu", item == "Python requests" and closed and opened == "menuitem"
                      and back == ["copy-as", True, "false"] and python.startswith("import requests\n")
                      and url in python and last == "Kotlin (OkHttp)" and "fun main() {" in kotlin
                      and ".url(\"%s\")" % url.replace("$", "\\$") in kotlin,
                      repr((item, closed, opened, back, last, python[:300], kotlin[:600])))
    except Exception as error:
        checks.result("copy-as-menu", False, "%s; notice %r" % (str(error).splitlines()[0],
                                                                  page.text_content("#notice")))


def tab_arrows(page, checks):
    """With a flow open and the list focused, ArrowRight and ArrowLeft step through the pane's tabs
    (Response → Connection → Request, wrapping), as in mitmweb; on a focused tab the focus follows."""
    def current():
        return page.evaluate("() => document.querySelector('flow-detail .detail-tabs [aria-selected=\"true\"]')"
                             "?.textContent")
    page.click("flow-list .flow-row.selected")
    # The click opens the flow again: the keys wait for it, which would otherwise reset the tab.
    page.wait_for_function("() => !document.querySelector('flow-detail').hasAttribute('aria-busy')", timeout=10000)
    steps = [current()]
    for key in ("ArrowRight", "ArrowRight", "ArrowLeft"):
        page.keyboard.press(key)
        steps.append(current())
    page.focus("#detail-tab-connection")
    page.keyboard.press("ArrowRight")
    steps.append(current())
    focused = page.evaluate("() => document.activeElement?.id")
    checks.result("tabs-follow-arrows", steps == ["Response", "Connection", "Request", "Connection", "Request"]
                  and focused == "detail-tab-request", repr((steps, focused)))


def host_whole(page, checks):
    """With the detail pane open at 1400 px, the Host column shows an address and port whole
    (`127.0.0.1:PORT`, the origin's), not cut to `127.0.0.1:…`."""
    cells = page.evaluate("() => [...document.querySelectorAll('flow-list .flow-row[data-id] .c-host')]"
                          ".slice(0, 3).map((c) => [c.textContent, c.scrollWidth <= c.clientWidth])")
    shown = not page.evaluate("() => document.querySelector('flow-detail').hidden")
    checks.result("host-port-whole-beside-pane", shown and cells and all(whole for _, whole in cells)
                  and all(":" in text for text, _ in cells), repr(cells))


def narrow(page, checks):
    """At 480 px wide, a flow open: the list keeps rows in view above the pane, which shows its tabs."""
    page.set_viewport_size({"width": 480, "height": 800})
    time.sleep(0.5)
    sizes = page.evaluate("""() => {
        const list = document.querySelector('flow-list .flow-viewport').getBoundingClientRect();
        const pane = document.querySelector('flow-detail').getBoundingClientRect();
        const rows = [...document.querySelectorAll('flow-list .flow-row[data-id]')]
            .filter((r) => { const b = r.getBoundingClientRect(); return b.top >= list.top && b.bottom <= list.bottom; });
        return {list: Math.round(list.height), pane: Math.round(pane.height), paneTop: Math.round(pane.top),
                listBottom: Math.round(list.bottom), rows: rows.length};
    }""")
    checks.result("narrow-window-keeps-list", sizes["rows"] >= 4 and sizes["pane"] >= 250
                  and sizes["paneTop"] >= sizes["listBottom"] - 1, repr(sizes))
    page.set_viewport_size({"width": 1400, "height": 800})


def row_cells(page, path_or_host, column):
    """The `.c-COLUMN` cell text and title of the newest row whose path (or, for a tunnel, host) starts with it."""
    return page.evaluate("""([p, column]) => {
        const row = [...document.querySelectorAll('flow-list .flow-row[data-id]')].find((r) =>
            r.querySelector('.c-path').textContent.startsWith(p) || r.querySelector('.c-host').textContent.startsWith(p));
        const cell = row?.querySelector('.c-' + column);
        return cell ? [cell.textContent, cell.getAttribute('title') ?? ''] : null; }""", [path_or_host, column])


def list_markers(page, options, base, origin, checks):
    """A tunnel (CONNECT to localhost:PORT, passed through) reads `localhost:PORT` in the Host column
    (it read `localhost`); a flow whose origin sent 102 and 103 before its 200 is marked `103`, its
    tooltip naming both (the list showed nothing of them)."""
    port = origin.server_address[1]
    page.evaluate("() => { document.querySelector('flow-list .flow-viewport').scrollTop = 0; }")
    subprocess.run(["curl", "-s", "-o", "/dev/null", "--max-time", "10", "-p", "-x", options.proxy,
                    "http://localhost:%d/tunnelled" % port], timeout=20)
    hints = hints_origin()
    try:
        curl(options.proxy, "http://127.0.0.1:%d/early-hints" % hints.getsockname()[1])
    finally:
        hints.close()
    try:
        page.wait_for_function("""() => [...document.querySelectorAll('flow-list .flow-row[data-id]')]
            .some((r) => r.querySelector('.c-path').textContent === '/early-hints'
                && r.querySelector('.c-status').textContent === '200')""", timeout=10000)
        page.wait_for_function("""() => [...document.querySelectorAll('flow-list .flow-row.m-tunnel')].length > 0""",
                               timeout=10000)
        tunnel = row_cells(page, "localhost", "host")
        checks.result("tunnel-host-port", tunnel is not None and tunnel[0] == "localhost:%d" % port, repr(tunnel))
        marks = row_cells(page, "/early-hints", "marks")
        checks.result("early-hints-marked", marks is not None and marks[0].split() == ["103"]
                      and "102 Processing, 103 Early Hints" in marks[1], repr(marks))
    except Exception as error:
        checks.result("tunnel-host-port", False, "%s; rows %r" % (str(error).splitlines()[0], page.evaluate(
            "() => [...document.querySelectorAll('flow-list .flow-row[data-id]')].slice(0, 3).map((r) => r.textContent)")))


def refused_handshake_pane(page, options, origin, checks):
    """curl refuses the proxy's certificate (it trusts no DevProxy CA): the flow's pane explains
    client_rejected_certificate, its facts line starts with the persona (it started with " · "), and
    Copy as curl is disabled like Replay (it was enabled and answered "no HTTP request to repeat")."""
    port = origin.server_address[1]
    page.evaluate("() => { document.querySelector('flow-list .flow-viewport').scrollTop = 0; }")
    subprocess.run(["curl", "-s", "-o", "/dev/null", "--max-time", "10", "-p", "-x", options.proxy,
                    "https://127.0.0.1:%d/refused-handshake" % port], timeout=20)
    try:
        page.wait_for_function("""() => [...document.querySelectorAll('flow-list .flow-row.m-error[data-id]')]
            .some((r) => r.querySelector('.c-marks').getAttribute('title')?.includes('client_rejected_certificate'))""",
                               timeout=10000)
        page.evaluate("""() => [...document.querySelectorAll('flow-list .flow-row.m-error[data-id]')]
            .find((r) => r.querySelector('.c-marks').getAttribute('title')?.includes('client_rejected_certificate'))
            .click()""")
        page.wait_for_selector("flow-detail .error-banner", timeout=10000)
        shown = page.evaluate("""() => ({
            banner: document.querySelector('flow-detail .error-banner strong')?.textContent,
            facts: document.querySelector('flow-detail .detail-status')?.textContent,
            curl: document.getElementById('copy-curl')?.disabled,
            replay: document.getElementById('replay')?.disabled})""")
        checks.result("refused-handshake-pane", shown["banner"] == "client_rejected_certificate"
                      and shown["facts"].startswith("persona ") and shown["curl"] is True and shown["replay"] is True,
                      repr(shown))
        # Its row names the port, as the same host's requests do, and says what happened where a
        # request's path would be (it read `127.0.0.1` and an empty Path beside `✕`).
        cells = page.evaluate("""() => { const r = document.querySelector('flow-list .flow-row.selected');
            return [r.querySelector('.c-host').textContent, r.querySelector('.c-path').textContent,
                    r.querySelector('.c-path').getAttribute('title') ?? '']; }""")
        checks.result("refused-handshake-row", cells[0] == "127.0.0.1:%d" % port
                      and cells[1] == "(client rejected certificate)" and "does not trust the root" in cells[2],
                      repr(cells))
        # Marked (m) and made the comparison's base (c), the failed row has three markers, all
        # shown (the third was cut to `● …`).
        marks = mark_as_compare_base(page)
        checks.result("three-markers-whole", marks[1], repr(marks))
        page.keyboard.press("c")
        page.keyboard.press("m")
    except Exception as error:
        checks.result("refused-handshake-pane", False, str(error).splitlines()[0])
        checks.result("refused-handshake-row", False, str(error).splitlines()[0])
        checks.result("three-markers-whole", False, str(error).splitlines()[0])


def resend_opens_what_it_sent(page, options, base, stamp, checks):
    """Edit and resend with the path changed opens the flow it sent, its row selected, as Proxyman's
    Edit and Repeat does (the pane stayed on the original: the answer had to be found in the list);
    and the notice saying so floats over the page, the list not moved by it (it pushed the rows down
    a line for 6 s, under the pointer)."""
    path = "/resend/%d/original" % stamp
    edited = "/resend/%d/edited" % stamp
    requests_through(options.proxy, base, [path])
    noticed = False
    try:
        open_flow(page, path)
        # An earlier action's notice goes after 6 s: the list's place is measured without one.
        page.wait_for_function("() => document.getElementById('notice').hidden", timeout=10000)
        top = page.evaluate("() => document.querySelector('flow-list').getBoundingClientRect().top")
        page.click("#resend")
        page.fill("#resend-dialog input[name=url]", base + edited)
        page.click("#resend-send")
        page.wait_for_function("() => document.getElementById('notice').textContent.startsWith('sent as flow ')",
                               timeout=10000)
        sent = page.text_content("#notice").split("sent as flow ", 1)[1].strip()
        moved = page.evaluate("() => document.querySelector('flow-list').getBoundingClientRect().top") - top
        checks.result("notice-keeps-list-still", moved == 0, "the list moved %r px" % moved)
        noticed = True
        page.wait_for_function("""p => document.querySelector('flow-detail .detail-title')?.textContent.endsWith(p)
            && document.querySelector('flow-list .flow-row.selected .c-path')?.textContent === p""",
                               arg=edited, timeout=10000)
        selected_id = page.evaluate("() => document.querySelector('flow-list .flow-row.selected').getAttribute('data-id')")
        checks.result("resend-opens-what-it-sent", selected_id == sent, "%r selected, %r sent" % (selected_id, sent))
    except Exception as error:
        checks.result("resend-opens-what-it-sent", False, "%s; title %r" % (str(error).splitlines()[0],
                      page.text_content("flow-detail .detail-title")))
        if not noticed:
            checks.result("notice-keeps-list-still", False, str(error).splitlines()[0])


def websocket_columns_one_line(page, options, base, stamp, checks):
    """Beside a long message (70,000 bytes), a WebSocket message's time, opcode and length each keep
    to one line (`+0.004 s` broke after its number, the length after `(70 kB`), as DevTools keeps them."""
    path = "/ws/%d/columns" % stamp
    websocket_through(options.proxy, base + path)
    try:
        open_flow(page, path)
        page.wait_for_selector("flow-detail table.messages tbody tr", timeout=10000)
        lines = page.evaluate("""() => [...document.querySelectorAll('flow-detail table.messages tbody tr')].map((row) =>
            [...row.cells].slice(1, 4).map((cell) => { const range = document.createRange();
                range.selectNodeContents(cell);
                return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size; }))""")
        checks.result("websocket-columns-one-line", bool(lines) and all(n == 1 for row in lines for n in row), repr(lines))
        # Its disabled actions say why, Edit and resend too (it was disabled without a word).
        page.wait_for_selector("flow-detail .detail-actions:not(.running-actions) #resend", timeout=10000)
        titles = page.evaluate("() => ['replay', 'resend'].map((id) => { const b = document.querySelector("
                               "'flow-detail .detail-actions #' + id); return [b.disabled, b.title]; })")
        checks.result("websocket-resend-says-why", titles == [[True, "a websocket flow cannot be replayed"],
                                                              [True, "a websocket flow cannot be resent"]], repr(titles))
    except Exception as error:
        checks.result("websocket-columns-one-line", False, str(error).splitlines()[0])
        checks.result("websocket-resend-says-why", False, str(error).splitlines()[0])

if __name__ == "__main__":
    main()
