#!/usr/bin/env python3
"""Marks and comments in the web UI (headless Chromium, Playwright with the system browser), over a
saved session of three flows (`alpha`, `beta`, `gamma`) opened with `devproxy web FILE`:
`m` marks the selected flow red (a stripe on its row, the words in its markers' cell), a swatch
changes the colour, a comment typed and Entered shows as the row's ✎ with the comment as its title
(as text: markup in it stays characters), Escape puts a comment being typed back, a second page
sees the marks without reloading, `~marked` and `~comment` filter the list, and after a reload
everything is still there. No dialog, script error or CSP violation on either page.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

`--only refused`: over a session file that cannot be written, the page disables them and says why.

Usage: webui_marks.py --ui URL --proxy UNUSED [--only refused]
"""
import sys

from browser_page import Checks, chromium, live_page, ui_parser

ROW = """id => {
    const row = document.querySelector(`flow-list .flow-row[data-id="${id}"]`);
    if (!row) return null;
    const cell = row.querySelector('.c-marks');
    return {classes: [...row.classList], title: cell.getAttribute('title') || '',
            label: cell.getAttribute('aria-label') || '',
            stripe: getComputedStyle(row).boxShadow, bold: row.querySelectorAll('b').length};
}"""
IDS = "() => [...document.querySelectorAll('flow-list .flow-row[data-id]')].map(r => r.dataset.id).sort()"
PRESSED = """() => [...document.querySelectorAll('flow-detail .flow-note .swatch[aria-pressed="true"]')]
    .map(s => s.getAttribute('aria-label'))"""


def row(page, id):
    return page.evaluate(ROW, id) or {"classes": [], "title": "", "label": "", "stripe": "", "bold": 0}


def wait_row(page, id, condition, timeout=10000):
    """Waits until `condition` (a JS expression over `r`, the row's facts) holds for row `id`."""
    try:
        page.wait_for_function("([id, f]) => { const r = (%s)(id); return r && (%s); }" % (ROW, condition),
                               arg=[id, None], timeout=timeout)
        return True
    except Exception:
        return False


def select(page, id):
    page.click('flow-list .flow-row[data-id="%s"] .c-host' % id)
    page.wait_for_function("id => document.querySelector(`flow-detail .flow-note[data-id=\"${id}\"]`)", arg=id,
                           timeout=10000)


def set_filter(page, text):
    page.fill("filter-box input", text)
    page.keyboard.press("Enter")


def main():
    parser = ui_parser()
    parser.add_argument("--only")
    options = parser.parse_args()
    checks = Checks()
    if options.only == "refused":
        refused(options, checks)
        sys.exit(1 if checks.failed else 0)
    with chromium() as browser:
        page, problems = live_page(browser, options.ui)
        other, other_problems = live_page(browser, options.ui)
        page.wait_for_function("() => document.querySelectorAll('flow-list .flow-row[data-id]').length === 3",
                               timeout=10000)

        # `m` on the selected flow: red, said by the stripe and in words.
        select(page, "alpha")
        page.locator("flow-list").focus()
        page.keyboard.press("m")
        marked = wait_row(page, "alpha", "r.classes.includes('m-mark-red') && r.title.includes('marked red')")
        facts = row(page, "alpha")
        checks.result("m-marks-red", marked and "marked red" in facts["label"] and "inset" in facts["stripe"]
                      and page.evaluate(PRESSED) == ["mark red"], repr((facts, page.evaluate(PRESSED))))
        # The other page's row changes without a reload (the live stream).
        checks.result("other-page-sees-mark", wait_row(other, "alpha", "r.classes.includes('m-mark-red')"),
                      repr(row(other, "alpha")))

        # A swatch changes the colour; `m` again then takes the mark away, and a swatch gives it back.
        page.click("flow-detail .flow-note .swatch-blue")
        blue = wait_row(page, "alpha", "r.classes.includes('m-mark-blue') && !r.classes.includes('m-mark-red')")
        checks.result("swatch-marks-blue", blue and page.evaluate(PRESSED) == ["mark blue"]
                      and "marked blue" in row(page, "alpha")["title"],
                      repr((row(page, "alpha"), page.evaluate(PRESSED))))
        page.locator("flow-list").focus()
        page.keyboard.press("m")
        unmarked = wait_row(page, "alpha", "!r.classes.some(c => c.startsWith('m-mark-'))")
        page.click("flow-detail .flow-note .swatch-blue")
        again = wait_row(page, "alpha", "r.classes.includes('m-mark-blue')")
        checks.result("m-toggles-off", unmarked and again, repr(row(page, "alpha")))

        # A comment: typed, Entered; its markup stays text.
        select(page, "beta")
        comment = "why is <b>this</b> slow?"
        page.fill("flow-detail .note-comment", comment)
        page.press("flow-detail .note-comment", "Enter")
        commented = wait_row(page, "beta", "r.classes.includes('m-comment') && r.title.includes('comment: ' + %r)"
                             % comment)
        facts = row(page, "beta")
        checks.result("comment-saved-on-enter", commented and facts["bold"] == 0
                      and not any(c.startswith("m-mark-") for c in facts["classes"]), repr(facts))
        checks.result("other-page-sees-comment",
                      wait_row(other, "beta", "r.title.includes('why is <b>this</b> slow?')"),
                      repr(row(other, "beta")))
        # Escape puts back what was there; leaving the box saves.
        page.fill("flow-detail .note-comment", "not this")
        page.press("flow-detail .note-comment", "Escape")
        value = page.input_value("flow-detail .note-comment")
        page.wait_for_timeout(500)
        checks.result("escape-cancels", value == comment and comment in row(page, "beta")["title"],
                      repr((value, row(page, "beta"))))
        select(page, "gamma")
        page.fill("flow-detail .note-comment", "seen")
        page.press("flow-detail .note-comment", "Tab")
        checks.result("comment-saved-on-blur", wait_row(page, "gamma", "r.title.includes('comment: seen')"),
                      repr(row(page, "gamma")))

        # The filters.
        set_filter(page, "~marked")
        try:
            page.wait_for_function("() => [...document.querySelectorAll('flow-list .flow-row[data-id]')]"
                                   ".map(r => r.dataset.id).join() === 'alpha'", timeout=10000)
            ok = True
        except Exception:
            ok = False
        checks.result("filter-marked", ok, repr(page.evaluate(IDS)))
        set_filter(page, "~comment slow")
        try:
            page.wait_for_function("() => [...document.querySelectorAll('flow-list .flow-row[data-id]')]"
                                   ".map(r => r.dataset.id).join() === 'beta'", timeout=10000)
            ok = True
        except Exception:
            ok = False
        checks.result("filter-comment", ok, repr(page.evaluate(IDS)))
        title = page.get_attribute("filter-box input", "title") or ""
        checks.result("filter-help-names-them", "~marked" in title and "~comment" in title, title)

        # A reload keeps them (they are in the session file).
        set_filter(page, "")
        page.reload()
        page.wait_for_function("() => document.querySelectorAll('flow-list .flow-row[data-id]').length === 3",
                               timeout=10000)
        kept = (wait_row(page, "alpha", "r.classes.includes('m-mark-blue')")
                and wait_row(page, "beta", "r.title.includes('comment: why is <b>this</b> slow?')")
                and wait_row(page, "gamma", "r.title.includes('comment: seen')"))
        select(page, "beta")
        checks.result("reload-keeps-them", kept and page.input_value("flow-detail .note-comment") == comment,
                      repr((row(page, "alpha"), row(page, "beta"), row(page, "gamma"))))

        violations = page.evaluate("window.__violations") + other.evaluate("window.__violations")
        checks.result("no-page-errors", not problems and not other_problems and not violations,
                      repr((problems, other_problems, violations)))
    sys.exit(1 if checks.failed else 0)


def refused(options, checks):
    """A session file that cannot be written (one flow, `s1`): the swatches are disabled and the comment
    box read-only, each with the reason as its tooltip; `m` says the reason and marks nothing."""
    with chromium() as browser:
        page, problems = live_page(browser, options.ui)
        page.wait_for_function("() => document.querySelectorAll('flow-list .flow-row[data-id]').length === 1",
                               timeout=10000)
        select(page, "s1")
        state = page.evaluate("""() => {
            const swatches = [...document.querySelectorAll('flow-detail .flow-note .swatch')];
            const box = document.querySelector('flow-detail .note-comment');
            return {disabled: swatches.length === 7 && swatches.every(s => s.disabled),
                    titles: [...new Set(swatches.map(s => s.title))],
                    readOnly: box.readOnly, boxTitle: box.title};
        }""")
        ok = (state["disabled"] and state["readOnly"] and len(state["titles"]) == 1
              and "is not writable, so marks and comments cannot be saved" in state["titles"][0]
              and state["boxTitle"] == state["titles"][0])
        checks.result("refused-disabled-with-reason", ok, repr(state))
        page.locator("flow-list").focus()
        page.keyboard.press("m")
        try:
            page.wait_for_function("() => document.getElementById('notice').textContent.includes('is not writable')",
                                   timeout=5000)
            said = True
        except Exception:
            said = False
        checks.result("refused-m-says-why",
                      said and not any(c.startswith("m-mark-") for c in row(page, "s1")["classes"]),
                      repr((page.evaluate("() => document.getElementById('notice').textContent"), row(page, "s1"))))
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))


if __name__ == "__main__":
    main()
