#!/usr/bin/env python3
"""Where a request went and who signed its leaf, in the web UI (headless Chromium, Playwright with
the system browser), over flows the caller made through the proxy to a TLS origin (origin.py):
`/headers?named` sent with `Host: tenant-b.test` to localhost (its flow has `server.request_host`),
`/headers?first` signed by one intermediate of ana@acme.dev and `/headers?second` by her next one,
taken while the proxy ran.

Checks: the Connection tab names the host the request named beside the server, as text; the
pane's facts name the signer's serial; the list's Signer cells tell the two intermediates apart
(the serial whole in their tooltips); `~signer SERIAL` keeps the second one's flows only; Edit and
resend of the `named` flow fills the URL of the server it went to, keeps its Host line, and the
origin gets that Host.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_where_and_who.py --ui URL --proxy http://127.0.0.1:PORT
"""
import sys

from browser_page import Checks, chromium, live_page, ui_parser
from webui_browser import open_flow, set_filter


def main():
    parser = ui_parser()
    options = parser.parse_args()
    checks = Checks()
    with chromium() as browser:
        page, problems = live_page(browser, options.ui)
        request_host(page, checks)
        signers(page, checks)
        resend_to_the_server(page, checks)
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


def record(page, path):
    """The API's record of the newest flow whose URL ends with `path`."""
    return page.evaluate("""async (p) => {
        const list = await (await fetch('/api/flows?limit=50')).json();
        const flow = list.flows.find((f) => (f.url ?? '').endsWith(p));
        return flow ? (await fetch('/api/flows/' + encodeURIComponent(flow.id))).json() : null;
    }""", path)


def request_host(page, checks):
    try:
        open_flow(page, "/headers?named")
        page.click("#detail-tab-connection")
        shown = page.evaluate("""() => {
            const dt = [...document.querySelectorAll('flow-detail .connection dt')]
                .find((t) => t.textContent === 'Request named');
            return dt ? {text: dt.nextElementSibling.textContent,
                         elements: dt.nextElementSibling.children.length,
                         server: [...document.querySelectorAll('flow-detail .connection dt')]
                             .find((t) => t.textContent === 'Server')?.nextElementSibling.textContent} : null;
        }""")
        checks.result("request-host-shown", shown is not None and shown["elements"] == 0
                      and shown["text"].startswith("tenant-b.test (its Host; sent on the connection to localhost:")
                      and shown["server"].startswith("localhost:"), repr(shown))
        page.click("#detail-tab-request")
    except Exception as error:
        checks.result("request-host-shown", False, str(error).splitlines()[0])


def signers(page, checks):
    try:
        first, second = record(page, "/headers?first")["signer"], record(page, "/headers?second")["signer"]
        facts = []
        for path in ("/headers?first", "/headers?second"):
            open_flow(page, path)
            facts.append(page.text_content("flow-detail .detail-status"))
        checks.result("signer-serial-in-detail", first["serial"] != second["serial"]
                      and "signed by ana@acme.dev (serial %s)" % first["serial"] in facts[0]
                      and "signed by ana@acme.dev (serial %s)" % second["serial"] in facts[1], repr((first, second, facts)))
        page.keyboard.press("Escape")
        cells = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('flow-list .flow-row[data-id]')]
            .map((r) => [r.querySelector('.c-path').textContent,
                         [r.querySelector('.c-signer').textContent, r.querySelector('.c-signer').title]]))""")
        checks.result("signers-told-apart-in-list",
                      cells.get("/headers?first") == ["ana@acme.dev · " + first["serial"][:8],
                                                      "signed by ana@acme.dev, intermediate serial " + first["serial"]]
                      and cells.get("/headers?second") == ["ana@acme.dev · " + second["serial"][:8],
                                                           "signed by ana@acme.dev, intermediate serial " + second["serial"]],
                      repr(cells))
        set_filter(page, "~signer " + second["serial"].upper())
        page.wait_for_function("() => ![...document.querySelectorAll('flow-list .flow-row[data-id] .c-path')]"
                               ".some((c) => c.textContent === '/headers?first')", timeout=10000)
        paths = page.eval_on_selector_all("flow-list .flow-row[data-id] .c-path", "cells => cells.map(c => c.textContent)")
        checks.result("signer-filter-by-serial", "/headers?second" in paths and "/headers?first" not in paths, repr(paths))
        set_filter(page, "")
    except Exception as error:
        checks.result("signer-serial-in-detail", False, str(error).splitlines()[0])


def resend_to_the_server(page, checks):
    """Edit and resend of a request that named another host: the URL of the server it went to
    (localhost), the Host line as recorded, and the origin gets that Host."""
    try:
        original = record(page, "/headers?named")
        open_flow(page, "/headers?named")
        page.click("flow-detail #resend")
        page.wait_for_selector("#resend-dialog[open] textarea[name=headers]", timeout=10000)
        url = page.input_value("#resend-dialog input[name=url]")
        host_lines = [line for line in page.input_value("#resend-dialog textarea[name=headers]").split("\n")
                      if line.lower().startswith("host:")]
        page.click("#resend-send")
        page.wait_for_function("() => !document.querySelector('#resend-dialog').open", timeout=10000)
        page.wait_for_function("() => /sent as flow /.test(document.getElementById('notice')?.textContent ?? '')",
                               timeout=10000)
        sent = page.text_content("#notice").split("sent as flow ", 1)[1].strip()
        echoed = page.evaluate("async (id) => (await fetch('/api/flows/' + encodeURIComponent(id) + "
                               "'/response/body')).text()", sent)
        expected = "https://localhost:%d/headers?named" % original["server"]["port"]
        checks.result("resend-goes-where-original-went", url == expected and host_lines == ["Host: tenant-b.test"]
                      and "Host: tenant-b.test\n" in echoed, repr((url, expected, host_lines, echoed)))
    except Exception as error:
        checks.result("resend-goes-where-original-went", False, str(error).splitlines()[0])


if __name__ == "__main__":
    main()
