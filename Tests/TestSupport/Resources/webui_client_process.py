#!/usr/bin/env python3
"""The Client column and the detail's Process, in the web UI (headless Chromium, Playwright with the
system browser), over flows the caller made through the proxy: `/curl` with curl and `/python` with
python3, two processes on this machine.

Checks: the list has a Client column; `/curl`'s row shows `curl` there, its tooltip the process's
pid, executable and the client's address; `/python`'s row shows `python3`; clicking the Client title
sorts by it, A to Z (`/curl` above `/python`, `aria-sort` ascending, `sort=client` in the address),
again Z to A; the Connection tab of `/curl` says `curl · pid N · /…/curl`, as text.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_client_process.py --ui URL --proxy http://127.0.0.1:PORT
"""
import re
import sys

from browser_page import Checks, chromium, live_page, ui_parser
from webui_browser import open_flow


def client_cell(page, path):
    """The `[text, title, child elements]` of the Client cell of the newest row whose path is `path`."""
    page.wait_for_function("p => [...document.querySelectorAll('flow-list .flow-row[data-id] .c-path')]"
                           ".some((c) => c.textContent === p)", arg=path, timeout=10000)
    return page.evaluate("""(p) => { const row = [...document.querySelectorAll('flow-list .flow-row[data-id]')]
        .find((r) => r.querySelector('.c-path').textContent === p);
        const cell = row.querySelector('.c-client');
        return cell ? [cell.textContent, cell.getAttribute('title') ?? '', cell.children.length] : null; }""", path)


def main():
    options = ui_parser().parse_args()
    checks = Checks()
    with chromium() as browser:
        page, problems = live_page(browser, options.ui)
        try:
            headers = page.evaluate("() => [...document.querySelectorAll('flow-list .flow-header [role=columnheader]')]"
                                    ".map((c) => c.textContent)")
            checks.result("client-column", "Client" in headers, repr(headers))
            curl = client_cell(page, "/curl")
            tooltip = r"curl · pid \d+ · /\S*curl · 127\.0\.0\.1:\d+"
            checks.result("curl-row", curl is not None and curl[0] == "curl" and curl[2] == 0
                          and re.fullmatch(tooltip, curl[1]) is not None, repr(curl))
            python = client_cell(page, "/python")
            checks.result("python-row", python is not None and python[0] == "python3"
                          and "python" in python[1] and "127.0.0.1:" in python[1], repr(python))
        except Exception as error:
            checks.result("client-column", False, str(error).splitlines()[0])
        try:
            # The Client title sorts by it: A to Z first (curl above python3, where arrival order has
            # the later python3 on top), then Z to A; the address says so.
            order = ("() => [...document.querySelectorAll('flow-list .flow-row[data-id] .c-path')]"
                     ".map((c) => c.textContent).filter((p) => p === '/curl' || p === '/python').join()")
            page.click("flow-list .flow-header button.sort[data-col=client]", timeout=5000)
            page.wait_for_function("() => (%s)() === '/curl,/python'" % order, timeout=10000)
            ascending = [page.get_attribute("flow-list .flow-header .c-client", "aria-sort"),
                         page.evaluate("() => location.hash")]
            page.click("flow-list .flow-header button.sort[data-col=client]")
            page.wait_for_function("() => (%s)() === '/python,/curl'" % order, timeout=10000)
            descending = page.get_attribute("flow-list .flow-header .c-client", "aria-sort")
            checks.result("client-sorts", ascending[0] == "ascending" and "sort=client" in ascending[1]
                          and descending == "descending", repr((ascending, descending)))
            page.click("flow-list .flow-header button.sort[data-col=client]")
        except Exception as error:
            checks.result("client-sorts", False, str(error).splitlines()[0])
        try:
            open_flow(page, "/curl")
            page.click("#detail-tab-connection")
            shown = page.evaluate("""() => {
                const dt = [...document.querySelectorAll('flow-detail .connection dt')]
                    .find((t) => t.textContent === 'Process');
                return dt ? [dt.nextElementSibling.textContent, dt.nextElementSibling.children.length] : null;
            }""")
            checks.result("curl-process-shown", shown is not None and shown[1] == 0
                          and re.fullmatch(r"curl · pid \d+ · /\S*curl", shown[0]) is not None, repr(shown))
        except Exception as error:
            checks.result("curl-process-shown", False, str(error).splitlines()[0])
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
