#!/usr/bin/env python3
"""What --map-remote and --map-local did, in the web UI (headless Chromium, Playwright with the
system browser), over flows the caller made through a proxy running with
`--map-local '|/mock/user|FILE'`, `--map-remote '|/old/|/new/'`, `--modify-headers '|~s ~u /seen|X-Seen|yes'`
and `--modify-body '|~u /edited|"origin"|"proxied"'`: `/mock/user` answered from the file, `/old/x` sent on as
`/new/x` to a plain origin, `/seen`'s response given X-Seen, and `/edited`'s body edited.

Checks: the session store's record of each flow (the API's `/api/flows/ID`) holds `mapped`; its
Connection tab names the rule, the file or the URL the client asked for, and the option, as text;
its row in the list carries the mapped marker (✱) whose tooltip names the rule, drawn (not a
missing glyph's box: DejaVu Sans has it), and the caller's `/plain` flow (no rule) has none; marked
(m) and made the comparison's base (c), a mapped row's three markers show whole.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_mapped.py --ui URL --proxy http://127.0.0.1:PORT
"""
import sys

from browser_page import Checks, chromium, glyph_drawn, live_page, mark_as_compare_base, ui_parser
from webui_browser import open_flow


def main():
    parser = ui_parser()
    options = parser.parse_args()
    checks = Checks()
    with chromium() as browser:
        page, problems = live_page(browser, options.ui)
        for name, path, words in (("map-local", "/mock/user", ["answered from the file", "user.json", "(--map-local |/mock/user|"]),
                                  ("map-remote", "/new/x", ["sent to http://", "/new/x, asked for http://", "/old/x",
                                                            "(--map-remote |/old/|/new/)"]),
                                  ("modify-headers", "/seen", ["set X-Seen on the response",
                                                               "(--modify-headers |~s ~u /seen|X-Seen|yes)"]),
                                  ("modify-body", "/edited", ["1 replaced in the response body",
                                                              '(--modify-body |~u /edited|"origin"|"proxied")'])):
            try:
                open_flow(page, path)
                record = page.evaluate("""async (p) => {
                    const list = await (await fetch('/api/flows?limit=50')).json();
                    const flow = list.flows.find((f) => (f.url ?? '').endsWith(p));
                    return flow ? (await fetch('/api/flows/' + encodeURIComponent(flow.id))).json() : null;
                }""", path)
                checks.result(name + "-stored", record is not None and (record.get("mapped") or {}).get("rule") == name,
                              repr(record and record.get("mapped")))
                page.click("#detail-tab-connection")
                shown = page.evaluate("""() => {
                    const dt = [...document.querySelectorAll('flow-detail .connection dt')]
                        .find((t) => t.textContent === 'Mapped');
                    return dt ? {text: dt.nextElementSibling.textContent,
                                 elements: dt.nextElementSibling.children.length} : null;
                }""")
                checks.result(name + "-shown", shown is not None and shown["elements"] == 0
                              and all(word in shown["text"] for word in words), repr(shown))
                page.click("#detail-tab-request")
            except Exception as error:
                checks.result(name + "-shown", False, str(error).splitlines()[0])
        check_markers(page, checks)
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


# The mapped marker's tooltip for each rule (flow-summary.js, MAPPED_LABELS).
LABELS = {"map-local": ("/mock/user", "answered from a local file (map-local)"),
          "map-remote": ("/new/x", "sent to another URL (map-remote)"),
          "modify-headers": ("/seen", "headers changed (modify-headers)"),
          "modify-body": ("/edited", "body changed (modify-body)")}


def marks_cell(page, path):
    """The `[text, title]` of the Markers cell of the newest row whose path is `path`."""
    return page.evaluate("""(p) => { const row = [...document.querySelectorAll('flow-list .flow-row[data-id]')]
        .find((r) => r.querySelector('.c-path').textContent === p);
        if (!row) return null;
        const cell = row.querySelector('.c-marks');
        return [cell.textContent, cell.getAttribute('title') ?? '']; }""", path)


def check_markers(page, checks):
    """Each mapped row carries ✱ with its rule in the tooltip; the plain row none; ✱ is drawn."""
    for name, (path, label) in LABELS.items():
        try:
            cell = marks_cell(page, path)
            checks.result(name + "-marker", cell is not None and "✱" in cell[0] and label in cell[1], repr(cell))
        except Exception as error:
            checks.result(name + "-marker", False, str(error).splitlines()[0])
    try:
        page.wait_for_function("() => [...document.querySelectorAll('flow-list .flow-row[data-id] .c-path')]"
                               ".some((c) => c.textContent === '/plain')", timeout=10000)
        cell = marks_cell(page, "/plain")
        checks.result("plain-no-marker", cell is not None and "✱" not in cell[0] and "map-" not in cell[1]
                      and "mock" not in cell[1], repr(cell))
        # Drawn in the cell's font on a canvas, ✱ must differ from a character no font has (a box).
        drawn = glyph_drawn(page, "[...document.querySelectorAll('flow-list .flow-row[data-id] .c-marks')]"
                                  ".find((c) => c.textContent.includes('✱'))", "✱")
        checks.result("marker-drawn", drawn[2], repr(drawn))
        # Marked and made the comparison's base, the map-local row's three markers all show.
        open_flow(page, "/mock/user")
        marks = mark_as_compare_base(page)
        checks.result("three-markers-whole", marks[1] and "✱" in marks[0], repr(marks))
    except Exception as error:
        for name in ("plain-no-marker", "marker-drawn", "three-markers-whole"):
            checks.result(name, False, str(error).splitlines()[0])


if __name__ == "__main__":
    main()
