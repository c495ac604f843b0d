#!/usr/bin/env python3
"""The CA view's Devices (WireGuard) part in headless Chromium (Playwright with the system browser)
beside `devproxy run`. With a wireguard listener: the devices table lists peer 1 at 10.0.0.2, never
connected; the QR code loads (an image of the UI's own origin, under its CSP) and zbar reads a
screenshot of it back as the config the API gives; Copy puts that config on the clipboard and
Download saves it as devproxy-peer1.conf; the endpoint field rewrites the config's Endpoint line and
its QR code; a bad endpoint says why, and hides the config it replaces; the tunnel address opens the
Flows tab filtered to the device (`~src ^10\\.0\\.0\\.2:`). Without one: the part says how to start one, and shows no
config nor QR code. Neither page has a dialog, a script error or a CSP violation.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

With `--only live --shots DIR`: the page open while the device is away says `never connected`
(and saves DIR/wireguard-never-connected.png, the test's sign to connect the device), then follows
it to `connected · handshake N s ago` from the device's address, without a reload, and announces it.

With `--only remove` (the run has peers 1 and 2): the Remove button of peer 2's row asks in place,
with no dialog: one click makes it say `Remove peer 2? Click again` and the part what removing does,
and removes nothing; leaving the button (Tab) or 4 s put it back; from the keyboard Enter arms it,
Esc disarms it, and Enter twice deletes the device: its row goes, the part says so, `/api/wireguard`
lists peer 1 alone, and peer 1's config stays shown.

Usage: webui_wireguard.py --ui URL --proxy http://127.0.0.1:PORT [--only live --shots DIR | --only remove]
"""
import json, os, subprocess, sys, tempfile

from browser_page import Checks, api_get, chromium, live_page, ui_parser

CONFIG = "() => document.getElementById('wg-config') ? document.getElementById('wg-config').textContent : null"


def read_qr(page, directory):
    """zbar's reading of a screenshot of the QR code as the page shows it ("" when it reads none)."""
    path = directory + "/qr.png"
    page.locator("wireguard-panel img.qr").screenshot(path=path)
    result = subprocess.run(["zbarimg", "--raw", "-q", path], capture_output=True, timeout=30)
    return result.stdout.decode("utf-8", "replace").rstrip("\n")


def qr_loaded(page):
    page.wait_for_function("() => { const i = document.querySelector('wireguard-panel img.qr');"
                           " return i && i.complete && i.naturalWidth > 0; }", timeout=10000)


def with_listener(page, options, checks, directory):
    status = json.loads(api_get(options.ui, "/api/wireguard"))
    page.wait_for_function("() => document.querySelectorAll('wireguard-panel tbody tr').length === 1", timeout=10000)
    row = page.evaluate("() => [...document.querySelectorAll('wireguard-panel tbody tr td')].map((c) => c.textContent)")
    checks.result("devices-table", row == ["peer 1", "10.0.0.2", "never connected", "—", "Remove"], repr(row))

    config = api_get(options.ui, "/api/wireguard/peers/1/config").decode()
    page.wait_for_function("(c) => document.getElementById('wg-config').textContent === c", arg=config, timeout=10000)
    qr_loaded(page)
    source = page.evaluate("() => document.querySelector('wireguard-panel img.qr').getAttribute('src')")
    checks.result("qr-loaded", source.startswith("/api/wireguard/peers/1/qr.svg")
                  and ("Endpoint = %s\n" % status["endpoint"]) in config, repr((source, status)))
    checks.result("qr-reads-as-config", read_qr(page, directory) == config.rstrip("\n"), "")

    page.click("#wg-copy")
    copied = page.evaluate("() => navigator.clipboard.readText()")
    checks.result("copy-gives-config", copied == config, repr(copied))
    with page.expect_download() as info:
        page.click("#wg-download")
    download = info.value
    saved = open(download.path(), encoding="utf-8").read()
    checks.result("download-gives-config", saved == config and download.suggested_filename == "devproxy-peer1.conf",
                  repr((download.suggested_filename, saved == config)))

    page.fill("#wg-endpoint", "10.0.2.2:51820")
    page.wait_for_function("() => document.getElementById('wg-config').textContent.includes('Endpoint = 10.0.2.2:51820')",
                           timeout=10000)
    emulator = api_get(options.ui, "/api/wireguard/peers/1/config?endpoint=10.0.2.2%3A51820").decode()
    checks.result("endpoint-rewrites-config", page.evaluate(CONFIG) == emulator and emulator != config, "")
    page.wait_for_function("() => document.querySelector('wireguard-panel img.qr').getAttribute('src')"
                           ".includes('endpoint=10.0.2.2')", timeout=10000)
    qr_loaded(page)
    checks.result("endpoint-rewrites-qr", read_qr(page, directory) == emulator.rstrip("\n"), "")

    page.fill("#wg-endpoint", "not a host:1")
    page.wait_for_function("() => !document.getElementById('wg-endpoint-error').hidden", timeout=10000)
    said = page.text_content("#wg-endpoint-error")
    hidden = page.evaluate("() => [document.querySelector('wireguard-panel img.qr').hidden,"
                           " document.getElementById('wg-config').hidden]")
    checks.result("bad-endpoint-says-why", "does not name a host" in said and hidden == [True, True]
                  and page.get_attribute("#wg-endpoint", "aria-invalid") == "true", repr((said, hidden)))

    # The tunnel address opens the Flows tab filtered to that device (`~src`, any port).
    page.click("wireguard-panel tbody tr[data-id='1'] button.wg-flows")
    page.wait_for_function("() => document.getElementById('tab-flows').getAttribute('aria-selected') === 'true'",
                           timeout=10000)
    shown = page.evaluate("() => [document.querySelector('filter-box input').value, location.hash,"
                          " document.getElementById('view-ca').hidden]")
    checks.result("address-shows-its-flows", shown[0] == "~src ^10\\.0\\.0\\.2:" and shown[2]
                  and "filter=%7Esrc" in shown[1], repr(shown))


def without_listener(page, checks):
    page.wait_for_function("() => document.querySelector('wireguard-panel pre.command')", timeout=10000)
    text = page.text_content("wireguard-panel")
    checks.result("no-listener-hint", "devproxy run --mode wireguard@0.0.0.0:51820 --allow-remote" in text
                  and page.evaluate("() => !document.querySelector('wireguard-panel img, #wg-config')")
                  and "PrivateKey" not in text, repr(text))


def live(page, options, checks):
    """`--only live`: the page open while the device is away, then as its tunnel comes up (the test
    connects it once `wireguard-never-connected.png` is in `--shots`)."""
    state = "() => { const c = document.querySelector('wireguard-panel tbody tr td:nth-child(3)'); return c ? c.textContent : ''; }"
    page.wait_for_function("() => (%s)() === 'never connected'" % state, timeout=10000)
    checks.result("live-never-connected", True, "")
    page.screenshot(path=options.shots + "/wireguard-never-connected.tmp.png")
    os.replace(options.shots + "/wireguard-never-connected.tmp.png", options.shots + "/wireguard-never-connected.png")
    page.wait_for_function("() => (%s)().startsWith('connected · handshake ')" % state, timeout=40000)
    row = page.evaluate("() => [...document.querySelectorAll('wireguard-panel tbody tr td')].map((c) => c.textContent)")
    peer = json.loads(api_get(options.ui, "/api/wireguard"))["peers"][0]
    said = page.text_content("wireguard-panel .wg-announce")
    checks.result("live-connected", row[2].endswith(" s ago") and peer["from"] and row[3] == peer["from"]
                  and said == "peer 1 connected from " + peer["from"]
                  and page.evaluate("() => document.querySelector('wireguard-panel tbody td.wg-connected') !== null"),
                  repr((row, peer, said)))
    page.screenshot(path=options.shots + "/wireguard-connected.png")


def remove(page, options, checks):
    """`--only remove`: peer 2 removed with its row's Remove button, in two clicks (no dialog)."""
    rows = "() => [...document.querySelectorAll('wireguard-panel tbody tr')].map((r) => r.children[0].textContent)"
    button = "wireguard-panel tbody tr[data-id='%s'] button.wg-remove"
    said = lambda: page.text_content("wireguard-panel .wg-announce")
    peers = lambda: [peer["peer"] for peer in json.loads(api_get(options.ui, "/api/wireguard"))["peers"]]
    page.wait_for_function("() => (%s)().length === 2" % rows, timeout=10000)

    # One click arms the button: it says what a second click does, and nothing is removed.
    page.click(button % 2)
    page.wait_for_timeout(1000)
    armed = [page.text_content(button % 2), said(), page.evaluate(rows), peers()]
    checks.result("remove-first-click-asks", armed[0] == "Remove peer 2? Click again"
                  and armed[1].startswith("Click again to remove peer 2 (10.0.0.3): its key is deleted")
                  and armed[2] == ["peer 1", "peer 2"] and armed[3] == [1, 2], repr(armed))
    # Leaving the button (Tab), or waiting 4 s, puts it back.
    page.keyboard.press("Tab")
    blurred = [page.text_content(button % 2), said()]
    page.click(button % 1)
    page.wait_for_function("(s) => document.querySelector(s).textContent === 'Remove'", arg=button % 1, timeout=6000)
    checks.result("remove-disarms", blurred == ["Remove", ""] and peers() == [1, 2]
                  and page.evaluate(rows) == ["peer 1", "peer 2"], repr(blurred))

    # From the keyboard: Enter arms, Esc disarms, Enter twice removes.
    page.focus(button % 2)
    page.keyboard.press("Enter")
    asked = page.text_content(button % 2)
    page.keyboard.press("Escape")
    escaped = page.text_content(button % 2)
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    page.wait_for_function("() => (%s)().join() === 'peer 1'" % rows, timeout=10000)
    checks.result("remove-second-click-removes", asked == "Remove peer 2? Click again" and escaped == "Remove"
                  and said() == "peer 2 (10.0.0.3) removed" and peers() == [1], repr((asked, escaped, said(), peers())))
    config = api_get(options.ui, "/api/wireguard/peers/1/config").decode()
    page.wait_for_function("(c) => document.getElementById('wg-config').textContent === c", arg=config, timeout=10000)
    checks.result("remove-keeps-peer-1", True, "")


def main():
    parser = ui_parser()
    parser.add_argument("--only", help="live: the device's state as its tunnel comes up (needs --shots); "
                        "remove: peer 2 removed with its row's button")
    parser.add_argument("--shots")
    options = parser.parse_args()
    checks = Checks()
    listening = json.loads(api_get(options.ui, "/api/wireguard"))["listening"]
    with chromium() as browser, tempfile.TemporaryDirectory() as directory:
        page, problems = live_page(browser, options.ui, clipboard=True)
        page.click("#tab-ca")
        if options.only == "live":
            live(page, options, checks)
        elif options.only == "remove":
            remove(page, options, checks)
        elif listening:
            with_listener(page, options, checks, directory)
        else:
            without_listener(page, checks)
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
