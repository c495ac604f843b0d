#!/usr/bin/env python3
"""GraphQL subscriptions over WebSocket in the web UI (headless Chromium, Playwright with the
system browser), over a UI whose proxy carried them (WebUIGraphQLWebSocketTests): the list names
a socket's operations beside its path (`/graphql · subscription OnTick`), a socket whose server
sent errors says so in its status, the socket opens on its Messages tab as before, and its
GraphQL tab lists each operation (id, type and name, document, variables, results, errors). No
dialog, script error or CSP violation.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_graphql_ws.py --ui URL --proxy UNUSED
"""
import sys

from browser_page import Checks, chromium, live_page, ui_parser
from webui_graphql import open_graphql_tab, row_with, rows, text_of


def main():
    parser = ui_parser()
    options = parser.parse_args()
    checks = Checks()
    with chromium() as browser:
        page, problems = live_page(browser, options.ui)
        page.wait_for_function("() => [...document.querySelectorAll('flow-list .flow-row .c-path')]"
                               ".filter(c => c.textContent.includes('·')).length >= 3", timeout=10000)
        paths = sorted(row["path"] for row in rows(page))
        checks.result("list-names-subscription", "/graphql · subscription OnTick" in paths, repr(paths))
        checks.result("list-names-legacy-operations", "/graphql · 2 operations: Legacy, Bad" in paths, repr(paths))
        checks.result("plain-socket-unnamed", "/plain" in paths, repr(paths))
        broken = row_with(page, "subscription Broken")
        checks.result("status-says-errors", broken is not None and "errors" in broken["status"]
                      and "GraphQL: 1 error" in broken["statusTitle"], repr(broken))

        # A socket still opens on its messages; the GraphQL tab is there beside them.
        tick = row_with(page, "subscription OnTick")
        page.click('flow-list .flow-row[data-id="%s"] .c-host' % tick["id"])
        try:
            page.wait_for_selector('flow-detail #detail-tab-messages[aria-selected="true"]', timeout=10000)
            page.wait_for_selector("flow-detail #detail-tab-graphql", timeout=10000)
            opened = True
        except Exception:
            opened = False
        checks.result("opens-on-messages-with-graphql-tab", opened)

        open_graphql_tab(page, tick)
        heads = text_of(page, "flow-detail .graphql-operation h3")
        facts = text_of(page, "flow-detail .graphql-operation dl")
        document = text_of(page, "flow-detail .graphql-document")
        variables = text_of(page, "flow-detail .graphql-variables")
        checks.result("tab-lists-operation", heads == "1. subscription OnTick", repr(heads))
        checks.result("tab-shows-id-and-results", "Id1" in facts.replace(" ", "") and "3 results" in facts
                      and "completed by the server" in facts, repr(facts))
        checks.result("tab-shows-document", "subscription OnTick($n: Int!) {\n  tick(count: $n)\n}" in document,
                      repr(document))
        checks.result("tab-shows-variables", '"n": 3' in variables, repr(variables))

        open_graphql_tab(page, broken)
        errors = text_of(page, "flow-detail .graphql-errors li")
        checks.result("tab-shows-errors", "broken stream" in errors and "at broken" in errors and "BROKEN" in errors,
                      repr(errors))

        legacy = row_with(page, "Legacy, Bad")
        open_graphql_tab(page, legacy)
        heads = text_of(page, "flow-detail .graphql-operation h3")
        errors = text_of(page, "flow-detail .graphql-errors li")
        checks.result("tab-lists-legacy-operations", heads == "1. subscription Legacy\n2. subscription Bad", repr(heads))
        checks.result("tab-shows-error-message", "Cannot query field 'nope'" in errors, repr(errors))

        violations = page.evaluate("window.__violations")
        checks.result("no-page-errors", not problems and not violations, repr((problems, violations)))
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
