#!/usr/bin/env python3
"""The web UI's throttle marker (headless Chromium, Playwright with the system browser): beside a
`devproxy run --throttle slow-4g --throttle-hosts '*.example.com'` the top bar says
`⏱ throttled: slow-4g (…)` and its tooltip names the hosts; beside a proxy without `--throttle`
nothing is shown. `--only throttled` or `--only plain` says which proxy this is. Both have the
throttle menu beside the marker; `--only plain` also drives it: a preset, a custom profile, a bad
one (its reason shown, nothing changed), back to full speed, and a change made elsewhere (the API,
as another tab or a script would) reaching the page.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_throttle.py --ui URL --proxy http://127.0.0.1:PORT --only throttled|plain
"""
import sys

from browser_page import Checks, chromium, live_page, ui_parser

MARKER = """() => {
    const marker = document.getElementById('throttle-state');
    return marker && {shown: !marker.hidden && marker.getClientRects().length > 0,
                      text: marker.textContent, title: marker.title,
                      inTopBar: Boolean(marker.closest('header.top'))};
}"""


MENU = """() => {
    const menu = document.querySelector('throttle-menu');
    const select = document.getElementById('throttle-menu');
    const error = menu && menu.querySelector('.throttle-error');
    return menu && {shown: !menu.hidden && menu.getClientRects().length > 0, value: select && select.value,
                    options: select ? [...select.options].map((o) => o.value) : [],
                    error: error && !error.hidden ? error.textContent : ""};
}"""

API = """async ([method, body]) => {
    const init = {method, credentials: 'same-origin', headers: {'X-DevProxy-CSRF': '1', 'Content-Type': 'application/json'}};
    if (body !== null) init.body = JSON.stringify(body);
    const response = await fetch('/api/throttle', init);
    return {status: response.status, body: await response.json()};
}"""


def marker_text(page):
    marker = page.evaluate(MARKER)
    return marker["text"] if marker and marker["shown"] else ""


def drive_menu(page, checks):
    """Sets and clears the throttle from the menu, and sees a change made through the API."""
    page.select_option("#throttle-menu", "slow-4g")
    page.wait_for_function("() => document.getElementById('throttle-state').textContent.includes('slow-4g')",
                           timeout=10000)
    info = page.evaluate(API, ["GET", None])
    checks.result("menu-sets-a-preset", info["body"]["throttle"] and info["body"]["throttle"]["profile"] == "slow-4g"
                  and marker_text(page).startswith("⏱ throttled: slow-4g"), repr((info, marker_text(page))))
    page.select_option("#throttle-menu", "custom…")
    page.fill("#throttle-custom", "5g")
    page.press("#throttle-custom", "Enter")
    page.wait_for_function("() => !document.querySelector('throttle-menu .throttle-error').hidden", timeout=10000)
    menu = page.evaluate(MENU)
    info = page.evaluate(API, ["GET", None])
    checks.result("menu-refuses-a-bad-profile", "5g" in menu["error"] and "not a profile" in menu["error"]
                  and info["body"]["throttle"]["profile"] == "slow-4g", repr((menu, info)))
    page.fill("#throttle-custom", "1mbit/500kbit/100ms")
    page.press("#throttle-custom", "Enter")
    page.wait_for_function("() => document.getElementById('throttle-state').textContent.includes('1mbit/500kbit/100ms')",
                           timeout=10000)
    menu = page.evaluate(MENU)
    checks.result("menu-sets-a-custom-profile", menu["value"] == "1mbit/500kbit/100ms" and not menu["error"]
                  and marker_text(page) == "⏱ throttled: 1mbit/500kbit/100ms (1 Mbit/s down, 500 kbit/s up, +100 ms)",
                  repr((menu, marker_text(page))))
    page.select_option("#throttle-menu", "")
    page.wait_for_function("() => document.getElementById('throttle-state').hidden", timeout=10000)
    info = page.evaluate(API, ["GET", None])
    checks.result("menu-back-to-full-speed", info["body"]["throttle"] is None and marker_text(page) == "",
                  repr(info))
    # Changed elsewhere (a script, another tab): the page catches up on its own.
    answer = page.evaluate(API, ["PUT", {"profile": "3g", "hosts": ["*.example.com"]}])
    page.wait_for_function("() => document.getElementById('throttle-state').textContent.includes('3g')",
                           timeout=15000)
    marker = page.evaluate(MARKER)
    checks.result("page-follows-a-change-made-elsewhere", answer["status"] == 200 and page.evaluate(MENU)["value"] == "3g"
                  and "*.example.com" in marker["title"], repr((answer, marker)))


def main():
    parser = ui_parser()
    parser.add_argument("--only", required=True, choices=["throttled", "plain"])
    options = parser.parse_args()
    checks = Checks()
    with chromium() as browser:
        page, problems = live_page(browser, options.ui)
        # The info line is written from the same /api/info answer: once it is there, so is the marker.
        page.wait_for_function("() => document.getElementById('info-line').textContent.includes('DevProxy')",
                               timeout=10000)
        marker = page.evaluate(MARKER)
        if options.only == "throttled":
            checks.result("throttle-shown", bool(marker) and marker["shown"] and marker["inTopBar"]
                          and marker["text"] == "⏱ throttled: slow-4g (1.44 Mbit/s down, 675 kbit/s up, +563 ms)",
                          repr(marker))
            checks.result("throttle-hosts-in-tooltip", bool(marker) and "*.example.com" in marker["title"]
                          and "slow-4g" in marker["title"], repr(marker))
            menu = page.evaluate(MENU)
            checks.result("menu-shows-the-profile", bool(menu) and menu["shown"] and menu["value"] == "slow-4g"
                          and {"", "fast-4g", "slow-4g", "3g"} <= set(menu["options"]), repr(menu))
        else:
            checks.result("throttle-absent", not marker or (not marker["shown"] and marker["text"] == ""),
                          repr(marker))
            menu = page.evaluate(MENU)
            checks.result("menu-says-full-speed", bool(menu) and menu["shown"] and menu["value"] == "", repr(menu))
            drive_menu(page, checks)
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
