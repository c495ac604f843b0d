#!/usr/bin/env python3
"""The README's web UI screenshots (docs/screenshots/), taken from a session as an app's day makes
one: an API on api.acme.dev and images on cdn.acme.dev (names `devproxy run --resolve` sends to
this origin), a gzip JSON profile, a list of orders, a posted form, a 500, a server-sent event
feed, a chat over WebSocket, one request still waiting; a flow marked and commented; a mock made
from a flow in the Rules view.

  webui_screenshots.py serve
      the origin: prints its port (127.0.0.1, port 0), serves until stdin closes.
  webui_screenshots.py shoot --ui URL --proxy http://127.0.0.1:PORT --origin-port PORT --shots DIR
      makes the flows through the proxy and writes list.png, detail.png, detail-dark.png,
      websocket.png and rules.png to DIR (1400 x 800; with Pillow installed, as 256-colour PNGs,
      a third of the size). Prints `PASS name` or `FAIL name detail` a view; exits 1 on a failure.
      With --tls-port PORT --ca DIR (the proxy's CA directory, with its QA alternate root), also
      pinning.png: curl through the proxy to the acme hosts under their personas (trusting the
      team root, the QA root, pinning the team root's key) and pin-failure reports posted as
      TrustKit, TrustKit-Android and RFC 7469 reporters send them.
  webui_screenshots.py serve-tls DIR
      the same origin over TLS, with a self-signed certificate for the acme names written to
      DIR/origin.pem (the proxy's --upstream-ca); prints its port.
"""
import argparse, base64, gzip, hashlib, http.client, http.server, json, os, socket, ssl, subprocess, sys, tempfile
import re, threading, time, urllib.parse, zlib, struct

from browser_page import Checks, chromium, ui_context, watched_page

PROFILE = {"id": 4182, "name": "Ana Ferreira", "email": "ana@acme.dev", "plan": "team",
           "roles": ["admin", "billing"], "address": {"city": "Lisbon", "country": "PT"},
           "flags": {"new_checkout": True, "dark_mode": False}, "created": "2024-03-11T09:24:00Z"}
ORDERS = {"orders": [{"id": "ord_%d" % n, "total": round(19.9 * n, 2), "status": "open"} for n in range(1, 4)],
          "next": None}
CHAT_PUSHES = [{"type": "presence", "user": "rui", "online": True},
               {"type": "message", "room": "ops", "from": "rui", "text": "deploy is green"},
               {"type": "typing", "room": "ops", "user": "rui"},
               {"type": "message", "room": "ops", "from": "rui", "text": "rolling out to 100%"}]
CLOSE_1000 = b"\x88\x02\x03\xe8"


def png(width=48, height=48):
    """A small square PNG (the avatar)."""
    raw = b"".join(b"\x00" + bytes([40, 110, 210]) * width for _ in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, content_type, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        if path == "/api/v2/me":
            self.send(200, gzip.compress(json.dumps(PROFILE).encode()), "application/json",
                      [("Content-Encoding", "gzip"), ("Cache-Control", "private, max-age=60")])
        elif path == "/api/v2/orders":
            self.send(200, json.dumps(ORDERS).encode(), "application/json")
        elif path == "/api/v2/recommendations":
            self.send(500, b'{"error": "upstream timeout", "service": "recs"}', "application/json")
        elif path == "/api/v2/search":
            time.sleep(30)
            self.send(200, b"[]", "application/json")
        elif path == "/img/broken.png":
            self.send(200, b"<html>not an image</html>", "image/png")
        elif path.startswith("/img/"):
            self.send(200, png(), "image/png", [("Cache-Control", "max-age=86400")])
        elif path == "/api/v2/feed":
            events = "".join("event: price\nid: %d\ndata: {\"sku\": \"A-1\", \"price\": %.2f}\n\n" % (n, 9.5 + n / 10)
                             for n in range(4))
            self.send(200, events.encode(), "text/event-stream")
        elif path == "/ws/chat":
            self.chat()
        elif path.startswith("/v1/"):
            self.send(200, json.dumps({"ok": True, "path": path}).encode(), "application/json")
        else:
            self.send(404, b"not found", "text/plain")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if urllib.parse.urlsplit(self.path).path == "/api/v2/checkout":
            fields = urllib.parse.parse_qs(body.decode())
            self.send(201, json.dumps({"order": "ord_4", "items": fields.get("sku", [])}).encode(), "application/json")
        else:
            self.send(404, b"not found", "text/plain")

    def text(self, value):
        data = json.dumps(value, separators=(",", ":")).encode()
        self.wfile.write(bytes([0x81, len(data)]) + data)
        self.wfile.flush()

    def chat(self):
        """A chat socket: each of the client's two messages acknowledged, four pushed, Close 1000."""
        key = self.headers["Sec-WebSocket-Key"]
        accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept.decode())
        self.end_headers()
        self.wfile.flush()
        for _ in range(2):
            head = self.rfile.read(2)
            mask = self.rfile.read(4)
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(head[1] & 0x7F)))
            self.text({"type": "ack", "id": json.loads(data)["id"]})
            time.sleep(0.05)
        for message in CHAT_PUSHES:
            time.sleep(0.2)
            self.text(message)
        self.wfile.write(CLOSE_1000)
        self.wfile.flush()
        self.rfile.read(6)
        self.close_connection = True


def serve():
    origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    origin.daemon_threads = True
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    print(origin.server_address[1], flush=True)
    sys.stdin.read()
    origin.shutdown()


def serve_tls(directory):
    cert, key = os.path.join(directory, "origin.pem"), os.path.join(directory, "origin.key")
    names = ",".join("DNS:%s.acme.dev" % name for name in ["api", "pay", "cdn", "auth", "login", "reports"])
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-days", "2", "-subj", "/CN=acme origin", "-addext", "subjectAltName=" + names,
                    "-keyout", key, "-out", cert], check=True, capture_output=True, timeout=30)
    origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    origin.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    origin.socket = context.wrap_socket(origin.socket, server_side=True)
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    print(origin.server_address[1], flush=True)
    sys.stdin.read()
    origin.shutdown()


def through(proxy, method, url, body=None, headers=None):
    """One request through the proxy (absolute-form); the response's status."""
    address = urllib.parse.urlsplit(proxy)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    try:
        connection.request(method, url, body=body, headers={"User-Agent": "AcmeShop/5.2 (iPhone; iOS 18.1)",
                                                            "Accept": "application/json", **(headers or {})})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def waiting(proxy, url):
    """A request whose answer comes after the pictures (its timeout is no failure)."""
    try:
        through(proxy, "GET", url)
    except OSError:
        pass


def chat_through(proxy, url):
    """The chat socket through the proxy: a subscribe and a message (masked, as a client sends
    them), then read until the server's Close, which is answered."""
    address = urllib.parse.urlsplit(proxy)
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                      % (url, urllib.parse.urlsplit(url).netloc, key)).encode())
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        for message in [{"type": "subscribe", "id": 1, "room": "ops"},
                        {"type": "send", "id": 2, "room": "ops", "text": "is the deploy done?"}]:
            payload = json.dumps(message, separators=(",", ":")).encode()
            mask = os.urandom(4)
            sock.sendall(bytes([0x81, 0x80 | len(payload)]) + mask
                         + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
            time.sleep(0.05)
        while not data.endswith(CLOSE_1000):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        sock.sendall(b"\x88\x80abcd")


def save(page, directory, name):
    """A screenshot of the page as DIR/NAME.png; with Pillow, quantized to 256 colours."""
    path = os.path.join(directory, name + ".png")
    page.screenshot(path=path)
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as image:
        image.convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def open_row(page, path):
    """Clicks the newest row whose Path cell is `path` and waits for its pane."""
    row = page.locator("flow-list .flow-row[data-id]", has=page.locator(".c-path", has_text=path)).first
    row.click()
    page.wait_for_function("p => document.querySelector('flow-detail .detail-title')?.textContent.includes(p)",
                           arg=path, timeout=10000)


def curl(proxy, url, *arguments):
    """curl through the proxy (a real TLS client); its exit status and standard output."""
    done = subprocess.run(["curl", "-sS", "--max-time", "10", "--proxy", proxy, "-A", "AcmeShop/5.2 (Android 15)",
                           *arguments, url], capture_output=True, text=True, timeout=30)
    return done.returncode, done.stdout


def spki_pin(certificate):
    """The base64 SHA-256 of a certificate's SubjectPublicKeyInfo, as pinners and curl hold it."""
    key = subprocess.run(["openssl", "x509", "-in", certificate, "-pubkey", "-noout"], capture_output=True,
                         check=True, timeout=10).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "DER"], input=key, capture_output=True,
                         check=True, timeout=10).stdout
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def validated_chain(proxy, url, trust, anchor, *arguments):
    """The chain a client validated on `url` through the proxy: the leaf curl was served (`%{certs}`;
    the proxy sends no root) and the anchor it chained to, each PEM with CRLF lines as TrustKit
    sends them."""
    _, out = curl(proxy, url, "--cacert", trust, "-o", "/dev/null", "-w", "%{certs}", *arguments)
    begin, end = "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----"
    pems = [begin + part.split(end)[0] + end for part in out.split(begin)[1:2]]
    with open(anchor) as file:
        pems.append(file.read())
    return [pem.strip().replace("\r\n", "\n").replace("\n", "\r\n") for pem in pems]


def pinning(options):
    """Pinning QA as a tester runs it: each acme host under its persona (`--persona`) with curl,
    and the pin-failure reports the apps' reporters post (`--sink-reports` answers them), then the
    panel with the verdicts, the evidence of the enforced host and the reports."""
    proxy, port = options.proxy, options.tls_port
    team, qa = os.path.join(options.ca, "root.pem"), os.path.join(options.ca, "qa-alternate-root.pem")
    # A test device's trust: the team root and the QA alternate root.
    both = os.path.join(tempfile.mkdtemp(), "device-trust.pem")
    with open(both, "w") as out, open(team) as first, open(qa) as second:
        out.write(first.read() + second.read())
    team_pin = spki_pin(team)
    url = lambda host, path: "https://%s.acme.dev:%d%s" % (host, port, path)
    statuses = {
        # team: the engineer's leaf, which an app pinning the team root accepts.
        "api": [curl(proxy, url("api", path), "--cacert", both)[0] for path in ["/v1/session", "/v1/cart"]],
        # unpinned: the QA root, trusted by the device; the app pins the team root and hangs up.
        "pay": [curl(proxy, url("pay", "/v1/payment-methods"), "--cacert", both, "--pinnedpubkey",
                     "sha256//" + team_pin)[0] for _ in range(2)],
        # unpinned too, but this client pins nothing (report-only: its reporter posts below).
        "cdn": [curl(proxy, url("cdn", "/v1/manifest.json"), "--cacert", both)[0]],
        # untrusted: a throwaway CA; ordinary validation refuses it.
        "auth": [curl(proxy, url("auth", "/v1/token"), "--cacert", both)[0]],
        # tls12: at most TLS 1.2; a client requiring 1.3 refuses the handshake.
        "login": [curl(proxy, url("login", "/v1/sso"), "--cacert", both, "--tlsv1.3")[0]],
    }
    backup_pin = base64.b64encode(hashlib.sha256(b"acme backup root key").digest()).decode()
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    # The chains the apps' reporters send: pay's as its pinner refused it (no request), cdn's as served.
    pay_chain = validated_chain(proxy, url("pay", "/v1/payment-methods"), both, qa,
                                "--pinnedpubkey", "sha256//" + team_pin)
    cdn_chain = validated_chain(proxy, url("cdn", "/v1/manifest.json"), both, qa)
    trustkit = {"app-bundle-id": "dev.acme.shop", "app-version": "5.2.0",
                "app-vendor-id": "7B1C0E52-5A0D-4C8E-9D0B-3F1E6A2C9D41", "app-platform": "IOS",
                "app-platform-version": "18.1.0", "trustkit-version": "3.0.3",
                "hostname": "pay.acme.dev", "port": 0, "noted-hostname": "pay.acme.dev", "include-subdomains": False,
                "enforce-pinning": True, "validated-certificate-chain": pay_chain, "date-time": now,
                "known-pins": ['pin-sha256="%s"' % team_pin, 'pin-sha256="%s"' % backup_pin],
                "validation-result": 1, "known-pins-expiration-date": "2027-06-30"}
    # TrustKit-Android on the same host, report-only (enforcePinning false), as the Android build ships it.
    android = dict(trustkit, **{"app-platform": "ANDROID", "app-platform-version": "15", "trustkit-version": "1.1.3",
                                "app-vendor-id": "", "hostname": "cdn.acme.dev", "noted-hostname": "acme.dev",
                                "include-subdomains": True, "enforce-pinning": False,
                                "validated-certificate-chain": cdn_chain})
    hpkp = {"date-time": now, "hostname": "cdn.acme.dev", "port": 443,
            "effective-expiration-date": "2027-06-30T00:00:00Z", "include-subdomains": False,
            "noted-hostname": "cdn.acme.dev",
            "served-certificate-chain": cdn_chain[:1], "validated-certificate-chain": cdn_chain,
            "known-pins": ['pin-sha256="%s"' % team_pin]}
    posted = [curl(proxy, "https://reports.acme.dev:%d/log_report" % port, "--cacert", team, "-o", "/dev/null",
                   "-w", "%{http_code}", "-H", "Content-Type: application/json", "--data-binary", json.dumps(body))[1]
              for body in [trustkit, hpkp, android]]
    return statuses, posted


def pinning_view(options, page, checks):
    try:
        statuses, posted = pinning(options)
        expected = {"api.acme.dev, persona team: debuggable", "pay.acme.dev, persona unpinned: enforced",
                    "cdn.acme.dev, persona unpinned: report-only", "auth.acme.dev, persona untrusted: validates",
                    "login.acme.dev, persona tls12: refused",
                    # The flows of the other pictures went in clear text.
                    "api.acme.dev, persona cleartext: cleartext", "cdn.acme.dev, persona cleartext: cleartext"}
        # The tab loads the panel again at each click: the last report's flow may end after the first load.
        for _ in range(15):
            page.click("#tab-pinning")
            try:
                page.wait_for_function("""() =>
                    document.querySelectorAll('pinning-panel table.reports tbody tr').length >= 3
                    && document.querySelectorAll('pinning-panel .pin-matrix button.chip').length >= 7""",
                                       timeout=1000)
                break
            except Exception:
                pass
        chips = set(page.eval_on_selector_all("pinning-panel .pin-matrix button.chip",
                                              "(chips) => chips.map((c) => c.getAttribute('aria-label'))"))
        # The enforced host's evidence: its flows and the TrustKit report its app sent.
        page.click("pinning-panel button.chip[aria-label='pay.acme.dev, persona unpinned: enforced']")
        page.wait_for_selector("pinning-panel section.evidence", timeout=5000)
        reports = page.eval_on_selector_all("pinning-panel table.reports tbody tr",
                                            "(rows) => rows.map((r) => r.cells[1].textContent)")
        # Each report's chain was the QA alternate root's (`unpinned`), as `devproxy reports` names it.
        signers = page.eval_on_selector_all("pinning-panel table.reports tbody tr",
                                            "(rows) => rows.map((r) => r.cells[5].textContent)")
        page.mouse.move(0, 0)
        save(page, options.shots, "pinning")
        # curl: 0 went through, 90 the pinned key did not match, 60 and 35 the certificate or handshake refused.
        clients = (statuses["api"] == [0, 0] and statuses["pay"] == [90, 90] and statuses["cdn"] == [0]
                   and statuses["auth"] == [60] and statuses["login"] == [35])
        checks.result("pinning", clients and expected == chips and posted == ["204"] * 3
                      and sorted(reports) == ["cdn.acme.dev", "cdn.acme.dev:443", "pay.acme.dev"]
                      and len(signers) == 3 and all(re.fullmatch("QA alternate root [0-9A-Fa-f]+", s) for s in signers),
                      repr((sorted(expected - chips), sorted(chips), reports, signers, posted, statuses)))
    except Exception as error:
        checks.result("pinning", False, str(error).splitlines()[0])


def shoot(options):
    checks = Checks()
    api = "http://api.acme.dev:%d" % options.origin_port
    cdn = "http://cdn.acme.dev:%d" % options.origin_port
    with chromium() as browser:
        context = ui_context(browser, options.ui, 1400, 800)
        page, problems = watched_page(context)
        page.goto(options.ui)
        page.wait_for_function("() => document.getElementById('connection-state').textContent === 'live'",
                               timeout=10000)
        proxy = options.proxy
        through(proxy, "GET", api + "/api/v2/me")
        through(proxy, "GET", cdn + "/img/avatar-4182.png", headers={"Accept": "image/*"})
        through(proxy, "GET", api + "/api/v2/orders?status=open&limit=20")
        through(proxy, "GET", api + "/api/v2/feed", headers={"Accept": "text/event-stream"})
        through(proxy, "GET", api + "/api/v2/recommendations?for=4182")
        through(proxy, "POST", api + "/api/v2/checkout", body="sku=A-1&sku=B-7&coupon=SPRING",
                headers={"Content-Type": "application/x-www-form-urlencoded"})
        chat_through(proxy, api + "/ws/chat")
        through(proxy, "GET", cdn + "/img/banner-spring.png", headers={"Accept": "image/*"})
        through(proxy, "GET", api + "/api/v2/me")
        # Still waiting when the list is taken (the origin answers it after 30 s).
        threading.Thread(target=waiting, args=(proxy, api + "/api/v2/search?q=red+shoes"), daemon=True).start()
        try:
            page.wait_for_function("() => document.querySelectorAll('flow-list .flow-row[data-id]').length >= 10",
                                   timeout=10000)
            # The 500, marked red with a comment, as one marks what to come back to.
            open_row(page, "/api/v2/recommendations?for=4182")
            page.click("flow-detail .swatch-red")
            # The pane draws the mark again (a new comment box): typed into before, the text went nowhere.
            page.wait_for_function("() => document.querySelector('flow-detail .swatch-red')?.getAttribute('aria-pressed')"
                                   " === 'true' && document.querySelector('flow-list .flow-row.m-mark-red')", timeout=5000)
            page.wait_for_timeout(300)
            page.fill("flow-detail input.note-comment", "recs times out again")
            page.keyboard.press("Enter")
            page.wait_for_function("() => document.querySelector('flow-list .flow-row.m-comment')", timeout=5000)
            page.click("flow-detail button.close")
            page.wait_for_function("() => document.querySelector('flow-detail').hidden", timeout=5000)
            page.wait_for_function("() => document.getElementById('notice').hidden", timeout=10000)
            save(page, options.shots, "list")
            checks.result("list", True)
        except Exception as error:
            checks.result("list", False, "%s; rows %r" % (str(error).splitlines()[0], page.evaluate(
                "() => [document.querySelector('flow-detail .note-error')?.textContent,"
                " ...[...document.querySelectorAll('flow-list .flow-row[data-id]')].map((r) => r.className)]")))
        try:
            open_row(page, "/api/v2/me")
            page.click("#detail-tab-response")
            page.wait_for_function("() => [...document.querySelectorAll('flow-detail line-view .line .code')]"
                                   ".some((c) => c.textContent.includes('\"Ana Ferreira\"'))", timeout=10000)
            page.mouse.move(0, 0)
            # Beside the pane, the Host column shows a name and its port whole, and the Method
            # column its title (they read `api.acme.dev:39…` and `Meth…`).
            cut = page.evaluate("""() => [...document.querySelectorAll(
                    'flow-list .flow-row[data-id] .c-host, flow-list .flow-header .c-method')]
                .filter((cell) => cell.scrollWidth > cell.clientWidth).map((cell) => cell.textContent)""")
            checks.result("host-and-method-whole-beside-pane", not cut, repr(cut))
            save(page, options.shots, "detail")
            page.emulate_media(color_scheme="dark")
            page.wait_for_timeout(200)
            save(page, options.shots, "detail-dark")
            page.emulate_media(color_scheme="light")
            checks.result("detail", True)
        except Exception as error:
            checks.result("detail", False, str(error).splitlines()[0])
        try:
            open_row(page, "/ws/chat")
            page.wait_for_function("() => document.querySelectorAll('flow-detail table.messages tbody tr').length >= 8",
                                   timeout=10000)
            save(page, options.shots, "websocket")
            checks.result("websocket", True)
        except Exception as error:
            checks.result("websocket", False, str(error).splitlines()[0])
        try:
            open_row(page, "/api/v2/recommendations?for=4182")
            page.click("#mock-from-flow")
            page.wait_for_selector("#mock-body", timeout=5000)
            page.fill("#mock-status", "200")
            page.fill("#mock-body", '{"items": [{"sku": "A-1", "score": 0.93}], "source": "mock"}')
            page.click("#rule-submit")
            page.wait_for_selector("rules-panel table tbody tr", timeout=5000)
            page.evaluate("() => document.activeElement?.blur()")
            save(page, options.shots, "rules")
            checks.result("rules", True)
        except Exception as error:
            checks.result("rules", False, str(error).splitlines()[0])
        page.click("#tab-flows")
        try:
            # An image says its size in pixels, and one that does not decode says so.
            facts = []
            through(proxy, "GET", cdn + "/img/broken.png", headers={"Accept": "image/*"})
            for path in ["/img/avatar-4182.png", "/img/broken.png"]:
                open_row(page, path)
                page.click("#detail-tab-response")
                page.wait_for_function("() => document.querySelector('flow-detail .image-facts')?.textContent",
                                       timeout=10000)
                facts.append(page.text_content("flow-detail .image-facts"))
            checks.result("image-facts", facts == ["48 × 48 px", "the body does not decode as image/png: download it"
                                                   " to look at its bytes"], repr(facts))
        except Exception as error:
            checks.result("image-facts", False, str(error).splitlines()[0])
        if options.tls_port:
            pinning_view(options, page, checks)
        checks.result("no-page-errors", not problems and not page.evaluate("window.__violations"),
                      repr((problems, page.evaluate("window.__violations"))))
        context.close()
    sys.exit(1 if checks.failed else 0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["serve", "serve-tls", "shoot"])
    parser.add_argument("directory", nargs="?")
    parser.add_argument("--tls-port", type=int)
    parser.add_argument("--ca")
    parser.add_argument("--ui")
    parser.add_argument("--proxy")
    parser.add_argument("--origin-port", type=int)
    parser.add_argument("--shots")
    options = parser.parse_args()
    if options.mode == "serve":
        serve()
    elif options.mode == "serve-tls":
        serve_tls(options.directory)
    else:
        shoot(options)


if __name__ == "__main__":
    main()
