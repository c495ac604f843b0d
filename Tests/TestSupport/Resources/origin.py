#!/usr/bin/env python3
"""A test origin server for DevProxy's end-to-end tests: HTTP/1.1 over TLS (or plain), one
behaviour per path (GET /requests: every request line received so far; GET /drop-next: the
connection's next request is dropped unanswered; POST /too-large: 413 before the body is read; GET /events?n=N: N server-sent events 0.5 s apart;
GET /early-hints: 103 then 200; GET /quiet?s=S: an event, S seconds of silence, another; GET /switch: an unasked-for 101; GET /te-gzip: Transfer-Encoding: gzip, chunked). Prints its port on the
first line of stdout. Loopback only.

Usage: origin.py [--tls CERT KEY] [--reports FILE]
"""
import base64, hashlib, http.server, os, select, socket, ssl, struct, sys, threading, time, urllib.parse

REPORTS = None

# Every request line parsed so far, for GET /requests (a request smuggled inside another's body
# shows up here as a line of its own).
REQUESTS = []

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def parse_request(self):
        parsed = super().parse_request()
        REQUESTS.append(self.requestline)
        return parsed

    def handle_one_request(self):
        # After GET /drop-next the connection's next request is read and the connection closed
        # with no answer: a keep-alive connection the server dropped just as a request came.
        if getattr(self, "drop_next", False):
            self.raw_requestline = self.rfile.readline(65537)
            REQUESTS.append(self.raw_requestline.decode("latin-1").rstrip("\r\n") + " (dropped)")
            self.close_connection = True
            return
        super().handle_one_request()

    def query(self):
        return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))

    def send_body(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        q = self.query()
        if path in ("/ntlm", "/ntlm-slow"):
            self.ntlm(path)
        elif path == "/requests":
            self.send_body(200, "\n".join(REQUESTS).encode(), [("Content-Type", "text/plain")])
        elif path == "/te-gzip":
            # A transfer coding besides chunked (RFC 9112 §7): Transfer-Encoding: gzip, chunked,
            # in two chunks; ?bad=1 sends bytes that are not gzip.
            import gzip
            coded = b"not gzip at all" if q.get("bad") else gzip.compress(b"hello transfer-coded world " * 100)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "gzip, chunked")
            self.end_headers()
            half = len(coded) // 2
            for piece in (coded[:half], coded[half:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        elif path == "/events":
            # Server-sent events: n events half a second apart, chunked.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(int(q.get("n", "4"))):
                if i:
                    time.sleep(0.5)
                event = b"data: event %d\n\n" % i
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/drop-next":
            self.send_body(200, b"the next request on this connection is dropped", [("Content-Type", "text/plain")])
            self.drop_next = True
        elif path == "/cl":
            n = int(q.get("n", "11"))
            self.send_body(200, (b"hello world" * (n // 11 + 1))[:n], [("Content-Type", "text/plain")])
        elif path == "/chunked":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Trailer", "X-Checksum")
            self.end_headers()
            for part in (b"first,", b"second,", b"third"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            # ?cl=1: a framing field in the trailer section too, which RFC 9110 §6.5.1 keeps out.
            extra = b"Content-Length: 99\r\n" if q.get("cl") else b""
            self.wfile.write(b"0\r\nX-Checksum: abc123\r\n" + extra + b"\r\n")
        elif path == "/close":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"until the connection closes")
            self.close_connection = True
        elif path == "/204":
            self.send_response(204)
            if "length" in q:
                # RFC 9110 §8.6 forbids it, and some servers send it anyway.
                self.send_header("Content-Length", q["length"])
            self.end_headers()
        elif path == "/304":
            self.send_response(304)
            self.send_header("ETag", '"v1"')
            self.end_headers()
        elif path == "/big":
            # ?mb=N MiB of the bytes 0..255 repeated; ?chunked=1 sends them chunked, with no length.
            size = int(q.get("mb", "1")) * 1024 * 1024
            chunked = q.get("chunked") == "1"
            block = bytes(range(256)) * 256
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(size))
            self.end_headers()
            sent = 0
            while sent < size:
                part = block[: min(len(block), size - sent)]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
                sent += len(part)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        elif path == "/coded":
            # ?mb=N MiB of JSON lines (with non-ASCII text), the same each time, in ?coding= gzip,
            # br, zstd or identity; ?bad=1 sends a gzip stream cut off and garbled under that coding.
            coding = q.get("coding", "identity")
            headers = [("Content-Type", "application/json")]
            if coding != "identity":
                headers.append(("Content-Encoding", coding))
            body = coded_body(int(q.get("mb", "1")), coding)
            if q.get("bad"):
                body = b"\x1f\x8b\x08\x00garbled, not deflate"
            self.send_body(200, body, headers)
        elif path == "/gzip":
            import gzip
            body = gzip.compress(b'{"compressed": true}')
            self.send_body(200, body, [("Content-Type", "application/json"), ("Content-Encoding", "gzip")])
        elif path == "/.well-known/pins.json":
            # A remote pin set (the iOS article's PinRotationManager): ?gzip=1 compresses it,
            # ?chunked=1 sends it chunked.
            body = (b'{"expiresAt": 836006400, "hashes": ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", '
                    b'"BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB="], "minAppVersion": "2.4.0"}')
            headers = [("Content-Type", "application/json"), ("Cache-Control", "max-age=60")]
            if q.get("gzip") == "1":
                import gzip
                body = gzip.compress(body)
                headers.append(("Content-Encoding", "gzip"))
            if q.get("chunked") == "1":
                self.send_response(200)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
            else:
                self.send_body(200, body, headers)
        elif path == "/zstd":
            # Made by the zstd CLI from a pipe, so the frame does not state its content size.
            import subprocess
            text = b'{"compressed": "zstd", "items": [' + b",".join(b"%d" % i for i in range(500)) + b"]}"
            body = subprocess.run(["zstd", "-q", "-c", "-19"], input=text, capture_output=True, check=True).stdout
            self.send_body(200, body, [("Content-Type", "application/json"), ("Content-Encoding", "zstd")])
        elif path == "/ws":
            self.websocket()
        elif path == "/headers":
            body = "\n".join("%s: %s" % (k, v) for k, v in self.headers.items()).encode()
            self.send_body(200, body, [("Content-Type", "text/plain")])
        elif path == "/whole":
            # Head and body in one write, so in one TLS record: a proxy reads the response whole.
            body = b"whole"
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s"
                             % (len(body), body))
        elif path == "/late-body":
            # The head at once, the body a second later.
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.flush()
            time.sleep(1)
            self.wfile.write(b"late")
        elif path == "/slow":
            time.sleep(float(q.get("s", "3")))
            self.send_body(200, b"slow", [("Content-Type", "text/plain")])
        elif path == "/quiet":
            # An event stream that goes quiet for s seconds between its two events. A peer that
            # closes the connection meanwhile is noted in /requests ("/quiet abandoned").
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", "27")
            self.end_headers()
            self.wfile.write(b"data: first\n\n")
            self.wfile.flush()
            deadline = time.time() + float(q.get("s", "3"))
            while time.time() < deadline:
                readable, _, _ = select.select([self.connection], [], [], 0.05)
                if not readable:
                    continue
                try:
                    gone = self.connection.recv(1) == b""   # nothing else comes mid-response but a close
                except (OSError, ValueError):
                    gone = True
                if gone:
                    REQUESTS.append("/quiet abandoned")
                    self.close_connection = True
                    return
            self.wfile.write(b"data: second\n\n")
        elif path == "/drip":
            # kb KiB, then nothing until the file `gate` exists, then 5 more bytes: a proxy
            # that holds the first part back until more arrives never lets the client open the gate.
            first = b"d" * (int(q.get("kb", "40")) * 1024)
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(first) + 5))
            self.end_headers()
            self.wfile.write(first)
            self.wfile.flush()
            deadline = time.time() + 20
            while not os.path.exists(q.get("gate", "")) and time.time() < deadline:
                time.sleep(0.01)
            self.wfile.write(b"done!")
        elif path == "/early-hints":
            # 103 Early Hints (RFC 8297) before the answer: browsers act on it over HTTP/2.
            self.wfile.write(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\n")
            self.wfile.flush()
            self.send_body(200, b"hinted", [("Content-Type", "text/plain")])
        elif path == "/switch":
            # 101 Switching Protocols to a request that asked for no upgrade, then other bytes.
            self.wfile.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: foo\r\nConnection: upgrade\r\n\r\nraw bytes")
            self.wfile.flush()
            time.sleep(1)
            self.close_connection = True
        elif path == "/charset":
            # `text` encoded in `name` (a Python codec), labelled `label` (default: `name`).
            body = q.get("text", "").encode(q["name"])
            self.send_body(200, body, [("Content-Type", "text/html; charset=" + q.get("label", q["name"]))])
        elif path == "/truncate":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"x" * 100)
            self.wfile.flush()
            self.close_connection = True
        else:
            self.send_body(404, b"no such path", [("Content-Type", "text/plain")])

    def ntlm(self, path):
        # NTLM as IIS does it, the handshake's state on the connection (this handler object):
        # TYPE1 is challenged, TYPE3 on the same connection signs its user in, and later requests
        # on that connection are that user's without credentials. (Tokens are placeholders.)
        if path == "/ntlm-slow":
            time.sleep(1)
        auth = self.headers.get("Authorization", "")
        challenge = [("WWW-Authenticate", "NTLM")]
        if auth == "NTLM TYPE1":
            self.challenged = True
            self.send_body(401, b"", [("WWW-Authenticate", "NTLM CHALLENGE")])
        elif auth.startswith("NTLM TYPE3-"):
            if getattr(self, "challenged", False):
                self.user = auth[len("NTLM TYPE3-"):]
                self.send_body(200, ("welcome " + self.user).encode())
            else:
                self.send_body(401, b"TYPE3 without a TYPE2 on this connection", challenge)
        elif getattr(self, "user", None):
            self.send_body(200, ("authenticated as " + self.user).encode())
        else:
            self.send_body(401, b"sign in", challenge)

    def do_POST(self):
        if urllib.parse.urlsplit(self.path).path == "/too-large":
            # Answered at once, the body left unread, the connection closed (an upload refused by
            # its size or its credentials): the rest of the upload meets a closed connection.
            self.send_body(413, b"too large", [("Content-Type", "text/plain"), ("Connection", "close")])
            self.close_connection = True
            return
        length = int(self.headers.get("Content-Length", "0"))
        if self.headers.get("Transfer-Encoding", "").lower().endswith("chunked"):
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                body += self.rfile.read(size)
                self.rfile.readline()
        else:
            body = self.rfile.read(length)
        if REPORTS and urllib.parse.urlsplit(self.path).path == "/report":
            with open(REPORTS, "ab") as f:
                f.write(body + b"\n")
        self.send_body(200, b"echo:" + body, [("Content-Type", "text/plain")])

    do_PUT = do_POST

    def websocket(self):
        key = self.headers["Sec-WebSocket-Key"]
        accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        while True:
            header = self.rfile.read(2)
            if len(header) < 2:
                return
            opcode, length = header[0] & 0x0F, header[1] & 0x7F
            if length == 126:
                length = struct.unpack("!H", self.rfile.read(2))[0]
            elif length == 127:
                length = struct.unpack("!Q", self.rfile.read(8))[0]
            mask = self.rfile.read(4) if header[1] & 0x80 else b"\0\0\0\0"
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(length)))
            if opcode == 8:
                self.wfile.write(b"\x88\x00")
                self.wfile.flush()
                # `/ws?close`: the server then closes the connection, as RFC 6455 §7.1.1 asks
                # (plain `/ws` waits for another request on it, as some servers do).
                self.close_connection = "close" in self.path
                return
            if "drop" in self.path:
                # `/ws?drop`: the connection closed after the first message, without a Close frame.
                self.close_connection = True
                return
            if "bye" in self.path:
                # `/ws?bye`: the server ends the session with its own Close frame, 4001 and a reason.
                reason = struct.pack("!H", 4001) + b"session expired"
                self.wfile.write(bytes([0x88, len(reason)]) + reason)
                self.wfile.flush()
                continue
            reply = b"echo:" + data
            self.wfile.write(bytes([0x80 | opcode, len(reply)]) + reply if len(reply) < 126 else
                             bytes([0x80 | opcode, 126]) + struct.pack("!H", len(reply)) + reply if len(reply) < 65536 else
                             bytes([0x80 | opcode, 127]) + struct.pack("!Q", len(reply)) + reply)
            self.wfile.flush()

CODED = {}

def coded_body(mb, coding):
    """What /coded sends: JSON lines up to `mb` MiB, compressed by real encoders (gzip module, the
    zstd CLI, libbrotlienc through ctypes: no brotli module or CLI in Debian's base set)."""
    if (mb, coding) in CODED:
        return CODED[(mb, coding)]
    text = bytearray()
    i = 0
    while len(text) < mb << 20:
        text += ('{"id":%d,"name":"item %d \u00e9\u2192\U0001f600","hash":"%08x"}\n'
                 % (i, i, (i * 2654435761) & 0xFFFFFFFF)).encode()
        i += 1
    text = bytes(text[: mb << 20].decode("utf-8", "ignore").encode())
    if coding == "gzip":
        import gzip
        body = gzip.compress(text, 6)
    elif coding == "zstd":
        import subprocess
        body = subprocess.run(["zstd", "-q", "-c", "-3"], input=text, capture_output=True, check=True).stdout
    elif coding == "br":
        import ctypes
        lib = ctypes.CDLL("libbrotlienc.so.1")
        size = ctypes.c_size_t(len(text) + 1024)
        out = ctypes.create_string_buffer(size.value)
        assert lib.BrotliEncoderCompress(5, 22, 0, ctypes.c_size_t(len(text)), text, ctypes.byref(size), out) == 1
        body = out.raw[: size.value]
    else:
        body = text
    CODED[(mb, coding)] = body
    return body

def main():
    global REPORTS
    args = sys.argv[1:]
    bind = args[args.index("--bind") + 1] if "--bind" in args else "127.0.0.1"
    port = int(args[args.index("--port") + 1]) if "--port" in args else 0
    if ":" in bind:
        http.server.ThreadingHTTPServer.address_family = socket.AF_INET6
    server = http.server.ThreadingHTTPServer((bind, port), Handler)
    server.daemon_threads = True
    if "--reports" in args:
        REPORTS = args[args.index("--reports") + 1]
    if "--tls" in args:
        i = args.index("--tls")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args[i + 1], args[i + 2])
        # Follow the client's cipher order, as nginx does by default (Python prefers its own).
        context.options &= ~ssl.OP_CIPHER_SERVER_PREFERENCE
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    # Stop when the test that started us goes away (stdin closes).
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    server.serve_forever()

main()
