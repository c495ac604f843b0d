#!/usr/bin/env python3
"""Compare two flows in the web UI (headless Chromium, Playwright with the system browser), through a
proxy the caller started (`devproxy run --web`); the script serves an origin and makes its requests
with curl through the proxy.

Checks: two GETs of `/api/user` that differ in one request header (`X-Client`), one query parameter
(`v`) and one field of the JSON they get back (`role`), the keys of that JSON in another order on each
side: "Compare…" in the first's pane marks it as the base (its row says `comparison base`), the
second's pane offers "Compare with GET /api/user?v=1&lang=en", which opens the comparison: exactly
those three differences are marked (no other header, parameter or body line; the key order is not a
difference, and the body's note says keys are sorted); the address says `#compare=BASE,OTHER` and a
reload opens the same comparison, swap reverses it, Esc closes it (and the address forgets it), an
address typed into the tab opens one. `c` in the list does the same (base, then compare), on two
flows whose header value and JSON body hold `<img src=x onerror=…>`: shown as text, no element made,
nothing run. Two text bodies of 1.5 MB that differ in three lines (two of them in the first MiB)
are compared in the worker while the page keeps answering (no timer late by more than the bound),
the first MiB of each, as a note says, with exactly two differing lines. A request still waiting
for its response compares what it has and says it has not ended. No dialog, script error or CSP
violation on the way. Clear closes a comparison and unsets the base. Two URL-encoded request bodies
whose fields come in another order compare as the one field whose value changed; JSON past the first
MiB is said to be compared as text.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_compare.py --ui URL --proxy http://127.0.0.1:PORT
"""
import http.server, json, subprocess, sys, threading, time, urllib.parse

from browser_page import Checks, live_page, origin_and_chromium, ui_parser

HOSTILE = "<img src=x onerror=window.__xss=1>"
# 1.5 MB of numbered lines, the same length each; `n=2` changes three of them (two in the first MiB),
# `n=3` every other one: no short edit script, the diff's worst case.
BIG_LINES = 50000
BIG_CHANGED = (10, 20000, 45000)
# How late a page timer may fire while the bodies are compared (ms).
LAG_BOUND = 400


def big_body(variant):
    lines = []
    for index in range(BIG_LINES):
        changed = index in BIG_CHANGED if variant == 2 else index % 2 == 1 if variant == 3 else False
        word = "other" if changed else "equal"
        lines.append("line %06d %s abcdefghij" % (index, word))
    return ("\n".join(lines) + "\n").encode()


class Origin(http.server.BaseHTTPRequestHandler):
    """`/api/user?v=N`: a user whose role depends on `v`, its keys in another order for each `v`;
    `/hostile?n=N`: JSON with markup in it; `/big?n=N`: 1.5 MB of text; `/slow`: answers after 4 s.
    The Date header never changes, so two answers' headers are the same."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def date_time_string(self, timestamp=None):
        return "Mon, 07 Dec 2026 03:00:00 GMT"

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        kind = "application/json"
        if url.path == "/api/user":
            if query.get("v") == "1":
                body = '{"id": 7, "name": "Ana", "role": "admin", "teams": ["a", "b"], "active": true}'
            else:
                body = '{"active": true, "teams": ["a", "b"], "role": "guest", "name": "Ana", "id": 7}'
            data = body.encode()
        elif url.path == "/hostile":
            data = json.dumps({"note": HOSTILE + query.get("n", ""), "n": query.get("n", "")}).encode()
        elif url.path == "/big":
            kind = "text/plain; charset=utf-8"
            data = big_body(int(query.get("n", "1")))
        elif url.path == "/bigjson":
            data = json.dumps([{"n": index, "v": query.get("n")} for index in range(60000)]).encode()
        elif url.path == "/slow":
            time.sleep(4)
            data = b'{"slow": true}'
        else:
            data = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(204)
        self.end_headers()


def curl(proxy, url, headers=(), form=None):
    arguments = ["curl", "-sS", "--http1.1", "--max-time", "30", "--proxy", proxy, "-o", "/dev/null"]
    for header in headers:
        arguments += ["-H", header]
    if form is not None:
        arguments += ["--data-binary", form, "-H", "Content-Type: application/x-www-form-urlencoded"]
    return subprocess.run(arguments + [url], capture_output=True, timeout=60)


# The origin's host and port as the list's Host column shows them (set once it listens).
ORIGIN_HOST = ""
ROWS = """([p, host]) => [...document.querySelectorAll('flow-list .flow-row[data-id]')]
    .filter(r => r.querySelector('.c-path').textContent === p && r.querySelector('.c-host').textContent === host)
    .sort((a, b) => a.getAttribute('aria-rowindex') - b.getAttribute('aria-rowindex'))"""


def row_id(page, path):
    """The id of the newest row of this origin whose path is `path`."""
    page.wait_for_function("a => (%s)(a).length > 0" % ROWS, arg=[path, ORIGIN_HOST], timeout=15000)
    return page.evaluate("a => (%s)(a)[0].getAttribute('data-id')" % ROWS, [path, ORIGIN_HOST])


def open_row(page, id):
    """Clicks row `id` and waits until the pane shows it, loaded."""
    page.click("flow-list .flow-row[data-id='%s'] .c-host" % id)
    page.wait_for_function("id => { const d = document.querySelector('flow-detail');"
                           " return !d.hidden && d.querySelector(`#compare[data-id=\"${id}\"]`)"
                           " && !d.hasAttribute('aria-busy'); }", arg=id, timeout=10000)


# What the comparison shows: per section, its rows that are not the same, as [kind, name, base, other].
SHOWN = """() => {
    const view = document.querySelector('flow-compare');
    const sections = {};
    for (const section of view.querySelectorAll('.compare-section')) {
        const rows = [...section.querySelectorAll('table.compare-fields tbody tr, table.diff-lines tbody tr')]
            .filter((r) => !r.classList.contains('diff-same') && !r.classList.contains('diff-info')
                && !r.classList.contains('diff-gap'))
            .map((r) => [r.className.replace('diff-', ''), ...[...r.cells]
                .slice(r.closest('table').classList.contains('diff-lines') ? 0 : 1).map((c) => c.textContent)]);
        sections[section.getAttribute('aria-label')] = {rows, count: section.querySelector('.compare-count')
            ?.textContent ?? '', notes: [...section.querySelectorAll('.compare-note')].map((n) => n.textContent)};
    }
    return {summary: view.querySelector('.compare-summary')?.textContent ?? '', sections,
            sides: [...view.querySelectorAll('.compare-side')].map((s) => s.textContent)};
}"""

# The comparison is on show, with every body compared (`ended`: of two flows that have ended: a flow
# curl has had its answer from may still be finishing in the session store).
DONE = """(ended) => { const v = document.querySelector('flow-compare');
    return v && !v.hidden && v.querySelector('.compare-summary')
        && !v.querySelector('.compare-summary').textContent.includes('comparing')
        && (!ended || ![...v.querySelectorAll('.compare-side')]
            .some((s) => s.textContent.includes('in progress'))); }"""


def shown(page, timeout=20000, ended=True):
    page.wait_for_function(DONE, arg=ended, timeout=timeout)
    return page.evaluate(SHOWN)


def main():
    parser = ui_parser()
    options = parser.parse_args()
    checks = Checks()
    with origin_and_chromium(http.server.ThreadingHTTPServer, Origin) as (browser, base, _):
        page, problems = live_page(browser, options.ui)
        try:
            run(page, options, base, checks)
        except Exception as error:
            checks.result("compare-checks", False, str(error).splitlines()[0])
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


def run(page, options, base, checks):
    global ORIGIN_HOST
    ORIGIN_HOST = base[len("http://"):]
    proxy = options.proxy
    curl(proxy, base + "/api/user?v=1&lang=en", ["X-Client: app-1.0"])
    curl(proxy, base + "/api/user?v=2&lang=en", ["X-Client: app-1.1"])
    first = row_id(page, "/api/user?v=1&lang=en")
    second = row_id(page, "/api/user?v=2&lang=en")

    # "Compare…" in the first's pane makes it the base; the list says so.
    open_row(page, first)
    page.click("flow-detail #compare")
    page.wait_for_function("id => document.querySelector(`flow-list .flow-row[data-id=\"${id}\"]`)"
                           ".classList.contains('m-compare-base')", arg=first, timeout=10000)
    label = page.get_attribute("flow-list .flow-row[data-id='%s'] .c-marks" % first, "aria-label")
    checks.result("base-marked-in-list", "comparison base" in label and page.text_content("flow-detail #compare")
                  == "Comparison base", repr(label))

    # The second's pane offers to compare with the base, by its method and path.
    open_row(page, second)
    offered = page.text_content("flow-detail #compare")
    checks.result("compare-with-base-offered", offered == "Compare with GET /api/user?v=1&lang=en", repr(offered))
    page.click("flow-detail #compare")
    facts = shown(page)
    sections = facts["sections"]
    headers = sections["Request headers"]["rows"]
    query = sections["Query parameters"]["rows"]
    body = sections["Response body"]
    checks.result("header-difference-exact", headers == [["changed", "X-Client", "app-1.0", "app-1.1"]], repr(headers))
    checks.result("query-difference-exact", query == [["changed", "v", "1", "2"]], repr(query))
    body_rows = [[kind, a.strip(), b.strip()] for kind, _, a, _, b in body["rows"]]
    checks.result("json-field-difference-exact", body_rows == [["changed", '"role": "admin",', '"role": "guest",']]
                  and any("keys sorted" in note for note in body["notes"]), repr(body))
    others = {name: section["rows"] for name, section in sections.items()
              if name not in ("Request headers", "Query parameters", "Response body", "Sizes and timings")
              and section["rows"]}
    checks.result("nothing-else-differs", not others and facts["summary"].startswith("3 differences"),
                  repr((others, facts["summary"])))
    checks.result("sides-base-left", facts["sides"][0].startswith("Base GET") and "v=1" in facts["sides"][0]
                  and "v=2" in facts["sides"][1], repr(facts["sides"]))

    # "only differences" off: the header fields that are the same show too, and the body's every line
    # (on: its changed line with three kept ones around it, `⋯ N unchanged lines` for the rest).
    counts = """() => ({same: document.querySelectorAll('flow-compare .compare-request-headers tr.diff-same').length,
        lines: document.querySelectorAll('flow-compare .compare-response-body tr:is(.diff-same, .diff-changed)').length,
        gaps: document.querySelectorAll('flow-compare .compare-response-body tr.diff-gap').length})"""
    only = page.evaluate(counts)
    page.click("#compare-only")
    page.wait_for_function("() => document.querySelectorAll('flow-compare .compare-request-headers tr.diff-same')"
                           ".length > 0 && document.querySelector('flow-compare .compare-response-body tr')",
                           timeout=10000)
    every = page.evaluate(counts)
    page.click("#compare-only")
    page.wait_for_function("() => !document.querySelector('flow-compare .compare-request-headers tr.diff-same')"
                           " && document.querySelector('flow-compare .compare-response-body tr.diff-gap')",
                           timeout=10000)
    checks.result("only-differences-toggle", only == {"same": 0, "lines": 7, "gaps": 2}
                  and every["same"] >= 3 and every["lines"] == 10 and every["gaps"] == 0, repr((only, every)))

    # The address carries it; a reload opens the same comparison.
    hash_ = page.evaluate("location.hash")
    checks.result("address-says-compare", hash_.endswith("compare=%s,%s" % (first, second)), repr(hash_))
    page.reload()
    page.wait_for_function("() => document.getElementById('connection-state').textContent === 'live'", timeout=10000)
    again = shown(page)
    checks.result("reload-opens-comparison", again["sections"]["Request headers"]["rows"] == headers
                  and "v=1" in again["sides"][0], repr(again["sides"]))
    # Swap: the other becomes the base, and the address follows.
    page.click("#compare-swap")
    page.wait_for_function("s => location.hash.endsWith(s)", arg="compare=%s,%s" % (second, first), timeout=10000)
    swapped = shown(page)
    checks.result("swap-reverses", swapped["sections"]["Request headers"]["rows"]
                  == [["changed", "X-Client", "app-1.1", "app-1.0"]], repr(swapped["sections"]["Request headers"]))
    # Esc closes it (from the "only differences" box too), and the address forgets it; the list is back.
    page.focus("#compare-only")
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.querySelector('flow-compare').hidden && !location.hash.includes('compare')"
                           " && document.querySelector('flow-list').offsetParent !== null", timeout=10000)
    checks.result("escape-closes", True)
    # An address typed into the tab opens a comparison.
    page.evaluate("h => { location.hash = h; }", "compare=%s,%s" % (first, second))
    typed = shown(page)
    checks.result("typed-address-opens", "v=1" in typed["sides"][0] and "v=2" in typed["sides"][1],
                  repr(typed["sides"]))
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.querySelector('flow-compare').hidden", timeout=10000)

    # `c` in the list: the selected flow becomes the base, `c` on it again unsets it, and `c` on another
    # flow compares it with the base.
    curl(proxy, base + "/hostile?n=1", ["X-Note: %s 1" % HOSTILE])
    curl(proxy, base + "/hostile?n=2", ["X-Note: %s 2" % HOSTILE])
    page.evaluate("() => { window.__xss = 0; }")
    hostile_one = row_id(page, "/hostile?n=1")
    open_row(page, hostile_one)
    is_base = "([id, on]) => document.querySelector(`flow-list .flow-row[data-id=\"${id}\"]`)" \
        ".classList.contains('m-compare-base') === on"
    toggled = []
    for on in (True, False, True):
        page.locator("flow-list").focus()
        page.keyboard.press("c")
        page.wait_for_function(is_base, arg=[hostile_one, on], timeout=10000)
        toggled.append(on)
    checks.result("c-key-sets-and-unsets-base", toggled == [True, False, True])
    open_row(page, row_id(page, "/hostile?n=2"))
    page.locator("flow-list").focus()
    page.keyboard.press("c")
    hostile = shown(page)
    note = hostile["sections"]["Request headers"]["rows"]
    text_rows = hostile["sections"]["Response body"]["rows"]
    made = page.evaluate("() => document.querySelectorAll('flow-compare img, flow-compare [onerror]').length")
    time.sleep(0.5)
    checks.result("c-key-compares", "n=1" in hostile["sides"][0] and "n=2" in hostile["sides"][1],
                  repr(hostile["sides"]))
    checks.result("markup-shown-as-text", made == 0 and page.evaluate("window.__xss") == 0
                  and note == [["changed", "X-Note", HOSTILE + " 1", HOSTILE + " 2"]]
                  and any(HOSTILE + "1" in a and HOSTILE + "2" in b for _, _, a, _, b in text_rows),
                  repr((made, note, text_rows)))
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.querySelector('flow-compare').hidden", timeout=10000)

    # Two URL-encoded forms, their fields in another order, one value changed: that field alone differs.
    curl(proxy, base + "/login?n=1", form="user=ana&token=abc%2B1&remember=on")
    curl(proxy, base + "/login?n=2", form="remember=on&user=ana&token=abc%2B2")
    page.evaluate("h => { location.hash = h; }",
                  "compare=%s,%s" % (row_id(page, "/login?n=1"), row_id(page, "/login?n=2")))
    login = shown(page)["sections"]["Request body"]
    checks.result("form-fields-compared", [[kind, a, b] for kind, _, a, _, b in login["rows"]]
                  == [["changed", "token=abc+1", "token=abc+2"]] and any("sorted by name" in n for n in login["notes"]),
                  repr(login))
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.querySelector('flow-compare').hidden", timeout=10000)

    # Two 1.5 MB bodies: the first MiB of each compared, the differences in it found.
    curl(proxy, base + "/big?n=1")
    curl(proxy, base + "/big?n=2")
    curl(proxy, base + "/big?n=3")
    big_one = row_id(page, "/big?n=1")
    big_two = row_id(page, "/big?n=2")
    big_three = row_id(page, "/big?n=3")
    page.evaluate("h => { location.hash = h; }", "compare=%s,%s" % (big_one, big_two))
    big = shown(page, timeout=60000)
    big_body_facts = big["sections"]["Response body"]
    kinds = [row[0] for row in big_body_facts["rows"]]
    checks.result("big-bodies-first-mib", kinds == ["changed", "changed"]
                  and any("first 1.0 MB of each body" in note for note in big_body_facts["notes"])
                  and all("line %06d other" % index in row[4]
                          for index, row in zip(BIG_CHANGED, big_body_facts["rows"])),
                  repr((kinds, big_body_facts["notes"], [row[1:] for row in big_body_facts["rows"]])))
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.querySelector('flow-compare').hidden", timeout=10000)

    # JSON past the first MiB: compared as text (it cannot be parsed cut), and the note says so.
    curl(proxy, base + "/bigjson?n=1")
    curl(proxy, base + "/bigjson?n=2")
    page.evaluate("h => { location.hash = h; }", "compare=%s,%s" % (row_id(page, "/bigjson?n=1"),
                                                                    row_id(page, "/bigjson?n=2")))
    cut_json = shown(page, timeout=60000)["sections"]["Response body"]
    checks.result("cut-json-said", any("JSON cut short is compared as text" in note for note in cut_json["notes"])
                  and cut_json["rows"] and cut_json["rows"][0][0] == "changed", repr(cut_json["notes"]))
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.querySelector('flow-compare').hidden", timeout=10000)

    # Every other line differs: the diff works for longer than the bound (in the worker) while the
    # page's timers keep firing on time.
    page.evaluate("""() => { window.__lag = 0; let last = performance.now();
        window.__ticker = setInterval(() => { const now = performance.now();
            window.__lag = Math.max(window.__lag, now - last - 20); last = now; }, 20); }""")
    started = time.monotonic()
    page.evaluate("h => { location.hash = h; }", "compare=%s,%s" % (big_one, big_three))
    heavy = shown(page, timeout=60000)
    took = (time.monotonic() - started) * 1000
    lag = page.evaluate("() => { clearInterval(window.__ticker); return window.__lag; }")
    heavy_rows = page.evaluate("() => document.querySelectorAll('flow-compare .compare-response-body "
                               "table.diff-lines tbody tr').length")
    checks.result("big-bodies-page-answers", took > LAG_BOUND and lag < LAG_BOUND and heavy_rows == 1000
                  and page.is_visible("flow-compare .diff-more"),
                  "worst timer lag %d ms while comparing for %d ms; %d rows drawn; %s" % (
                      lag, took, heavy_rows, heavy["sections"]["Response body"]["notes"]))
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.querySelector('flow-compare').hidden", timeout=10000)

    # A request still waiting for its response compares what it has.
    slow = threading.Thread(target=curl, args=(proxy, base + "/slow", ["X-Client: app-1.0"]), daemon=True)
    slow.start()
    slow_id = row_id(page, "/slow")
    page.evaluate("h => { location.hash = h; }", "compare=%s,%s" % (first, slow_id))
    waiting = shown(page, ended=False)
    checks.result("running-flow-compares-what-it-has", "in progress" in waiting["sides"][1]
                  and any("has not ended" in note for note in waiting["sections"]["Response body"]["notes"])
                  and ["changed", "URL", base + "/api/user", base + "/slow"] in
                  [row[:4] for row in waiting["sections"]["Request"]["rows"]], repr(waiting))
    slow.join(30)
    # When it ends, the comparison shows its response.
    page.wait_for_function("() => !document.querySelector('flow-compare .compare-other').textContent"
                           ".includes('in progress')", timeout=15000)
    ended = shown(page)
    checks.result("running-flow-compared-again-when-ended", not any("has not ended" in note for note in
                  ended["sections"]["Response body"]["notes"]), repr(ended["sections"]["Response body"]))

    # Clear takes the flows away: the comparison closes, the address forgets it, the base is unset.
    page.click("flow-compare #compare-swap")
    page.wait_for_function("s => location.hash.endsWith(s)", arg="compare=%s,%s" % (slow_id, first), timeout=10000)
    page.click("#clear-list")
    page.click("#clear-list")
    page.wait_for_function("() => document.querySelector('flow-compare').hidden && !location.hash.includes('compare')",
                           timeout=10000)
    curl(proxy, base + "/api/user?v=1&lang=en")
    open_row(page, row_id(page, "/api/user?v=1&lang=en"))
    checks.result("clear-closes-and-unsets", page.text_content("flow-detail #compare") == "Compare…",
                  page.text_content("flow-detail #compare"))


if __name__ == "__main__":
    main()
