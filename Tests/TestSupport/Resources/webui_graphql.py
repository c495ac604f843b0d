#!/usr/bin/env python3
"""GraphQL calls in the web UI (headless Chromium, Playwright with the system browser), over a UI
whose proxy carried them (WebUIGraphQLTests): the list names each operation beside its path
(`/graphql · query GetUser`, a batch's `2 operations: GetUser, GetFeed`), a call whose response
reported errors says `200 · errors`, `~graphql NAME` and `~gqlerr` filter the list, and the
detail pane's GraphQL tab shows the document indented, the variables, and the errors (message,
path, code) above the data. A query holding `<script>` in a string shows it as text. No dialog,
script error or CSP violation.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_graphql.py --ui URL --proxy UNUSED
"""
import sys

from browser_page import Checks, chromium, live_page, ui_parser

ROWS = """() => [...document.querySelectorAll('flow-list .flow-row[data-id]')].map(r => ({
    id: r.dataset.id, path: r.querySelector('.c-path').textContent, pathTitle: r.querySelector('.c-path').title || '',
    status: r.querySelector('.c-status').textContent, statusTitle: r.querySelector('.c-status').title || ''}))"""


def rows(page):
    return page.evaluate(ROWS)


def row_with(page, text):
    return next((row for row in rows(page) if text in row["path"]), None)


def set_filter(page, text):
    page.fill("filter-box input", text)
    page.keyboard.press("Enter")


def open_graphql_tab(page, row):
    """Selects `row`, shows its GraphQL tab and waits for the tab to have read the bodies."""
    page.click('flow-list .flow-row[data-id="%s"] .c-host' % row["id"])
    page.wait_for_selector("flow-detail #detail-tab-graphql", timeout=10000)
    page.click("flow-detail #detail-tab-graphql")
    page.wait_for_selector("flow-detail .graphql-operation", timeout=10000)


def text_of(page, selector):
    return page.evaluate("s => [...document.querySelectorAll(s)].map(e => e.textContent).join('\\n')", selector)


def main():
    parser = ui_parser()
    options = parser.parse_args()
    checks = Checks()
    with chromium() as browser:
        page, problems = live_page(browser, options.ui)
        page.wait_for_function("() => [...document.querySelectorAll('flow-list .flow-row .c-path')]"
                               ".filter(c => c.textContent.includes('·')).length >= 5", timeout=10000)
        listed = rows(page)
        paths = sorted(row["path"] for row in listed)
        checks.result("list-names-operation", "/graphql · query GetUser" in paths, repr(paths))
        checks.result("list-names-batch", "/graphql · 2 operations: GetUser, GetFeed" in paths, repr(paths))
        checks.result("list-names-get", "/graphql · query (anonymous)" in paths, repr(paths))
        checks.result("search-json-is-no-graphql", "/search" in paths, repr(paths))
        liked = row_with(page, "mutation Like")
        checks.result("status-says-errors", liked is not None and liked["status"] == "200 · errors"
                      and "GraphQL: 1 error" in liked["statusTitle"], repr(liked))
        fine = row_with(page, "query GetUser")
        checks.result("status-plain-without-errors", fine is not None and fine["status"] == "200", repr(fine))
        # A narrow Path cell cuts the name short: its tooltip has it whole, below the URL.
        checks.result("path-tooltip-names-operation", fine is not None
                      and fine["pathTitle"].endswith("/graphql\nquery GetUser"), repr(fine))

        # A GraphQL call opens on its GraphQL tab, as a gRPC call opens on its messages.
        page.click('flow-list .flow-row[data-id="%s"] .c-host' % fine["id"])
        try:
            page.wait_for_selector('flow-detail #detail-tab-graphql[aria-selected="true"]', timeout=10000)
            opened = True
        except Exception:
            opened = False
        checks.result("opens-on-graphql-tab", opened)

        # The tab: the document indented, the variables as JSON.
        open_graphql_tab(page, fine)
        document = text_of(page, "flow-detail .graphql-document")
        variables = text_of(page, "flow-detail .graphql-variables")
        checks.result("tab-shows-query", "query GetUser($id: ID!) {\n  user(id: $id) {\n    name\n  }\n}" in document,
                      repr(document))
        checks.result("tab-shows-variables", '"id": "7"' in variables, repr(variables))

        # The errors above the data: message, path, code.
        open_graphql_tab(page, liked)
        errors = text_of(page, "flow-detail .graphql-errors li")
        data = text_of(page, "flow-detail .graphql-data")
        checks.result("tab-shows-data", '"like": null' in data, repr(data))
        checks.result("tab-shows-errors", "not allowed to like 1" in errors and "at like" in errors
                      and "FORBIDDEN" in errors, repr(errors))

        # Markup in a string of the query is text, never an element.
        search = row_with(page, "query Search")
        open_graphql_tab(page, search)
        document = text_of(page, "flow-detail .graphql-document")
        scripts = page.evaluate("() => document.querySelectorAll('flow-detail script, flow-detail b').length")
        checks.result("markup-stays-text", '"<script>window.__pwned = true</script>"' in document and scripts == 0
                      and not page.evaluate("() => window.__pwned === true"), repr((document, scripts)))

        # The filters.
        set_filter(page, "~gqlerr")
        page.wait_for_function("() => document.querySelectorAll('flow-list .flow-row[data-id]').length === 1",
                               timeout=10000)
        checks.result("filter-gqlerr", [row["path"] for row in rows(page)] == ["/graphql · mutation Like"],
                      repr(rows(page)))
        set_filter(page, "~graphql ^GetUser$")
        page.wait_for_function("() => document.querySelectorAll('flow-list .flow-row[data-id]').length === 2",
                               timeout=10000)
        checks.result("filter-graphql-name", sorted(row["path"] for row in rows(page))
                      == ["/graphql · 2 operations: GetUser, GetFeed", "/graphql · query GetUser"], repr(rows(page)))

        title = page.get_attribute("filter-box input", "title") or ""
        checks.result("filter-help-names-them", "~graphql" in title and "~gqlerr" in title, title)

        violations = page.evaluate("window.__violations")
        checks.result("no-page-errors", not problems and not violations, repr((problems, violations)))
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
