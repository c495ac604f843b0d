"""A scripted HTTP/2 origin (Python h2, PyPI) that misbehaves on purpose, for DevProxy's tests.

Usage: h2bad.py CERT KEY [--connect-protocol-once] [--then-http1]      prints its port, serves until
stdin closes.
--connect-protocol-once: the first connection's SETTINGS enable extended CONNECT (RFC 8441
SETTINGS_ENABLE_CONNECT_PROTOCOL), later connections' do not (an origin that changed between two
connections). --then-http1: connections after the first offer only http/1.1 in ALPN and answer
every request 200 "ok" over HTTP/1.1.
Paths: /ok (200 "ok"), /refused (RST_STREAM REFUSED_STREAM at once), /rst (200, "partial", then
RST_STREAM INTERNAL_ERROR), /grpc-rst-mid?code=N (a gRPC head and one message, then RST_STREAM with code N), /goaway (200 "bye", then GOAWAY NO_ERROR), /slow (200 "slow" after
two seconds), /whole (200 "whole": head and body in one write, so in one TLS record), /late-body
(the head at once, the body "late" a second later), /long-body (content-length 3, then "too long"), /huge-header (a
70 KiB field in the response head), /burst-error (the head, "partial" and a DATA frame on stream 0, a
connection error, in one write), /bad-header (a
`connection` field in the response head), /stuck (the head and "part", then silence), /mute (no answer),
/early (200 "early" before the request body is in, then RST_STREAM NO_ERROR), /early-hints (103 Early Hints with a
`link` field, then 200 "hinted"), /quiet?s=S (an event
stream quiet for S seconds between its two events), /resets (the paths of the streams the peer reset), /close-next (200 "ok",
then the connection's next request closes it unanswered, without GOAWAY: an idle connection the
server dropped just as a request came), /refused-once and /goaway-once (REFUSED_STREAM, or GOAWAY
with last stream 0, the first time either is asked for; 200 "ok" after), /authority (200, the
:authority the request came with), /headers (200, the request's fields as they arrived, one
"name: value" a line, pseudo-header fields first), /secured?status=N (as /headers, with status N, 200 when left
out, and Strict-Transport-Security and Content-Security-Policy), /trailers (200 with content-length 5 and `trailer:
x-checksum`, "hello", then the trailer x-checksum: 5d41402a), /push (a PUSH_PROMISE for /pushed though
the peer turned push off, after the SETTINGS ACK, then 200 "ok"), /account (200 JSON '{"user": "ana",
"premium":false}' with its content-length; /account?gzip gzip-coded).
"""
import gzip
import socket
import ssl
import sys
import threading
import time
import urllib.parse

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings
import hyperframe.frame


# The paths of streams the peer reset (RST_STREAM), for GET /resets.
RESETS = []
RESETS_LOCK = threading.Lock()
# How many times each /…-once path was asked for, across connections.
ONCE = {}


def serve_connection(tls, enable_connect_protocol=False):
    # Outbound headers unchecked: /bad-header sends a field HTTP/2 forbids.
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8",
                                                                       validate_outbound_headers=False,
                                                                       normalize_outbound_headers=False))
    if enable_connect_protocol:
        # In the connection's first SETTINGS frame, as hypercorn sends it.
        conn.local_settings = h2.settings.Settings(
            client=False, initial_values={h2.settings.SettingCodes.ENABLE_CONNECT_PROTOCOL: 1})
    conn.initiate_connection()
    lock = threading.Lock()
    tls.sendall(conn.data_to_send())

    def send(fn):
        with lock:
            fn()
            tls.sendall(conn.data_to_send())

    def respond(sid, body, then=None):
        send(lambda: conn.send_headers(sid, [(":status", "200"), ("content-type", "text/plain")]))
        send(lambda: conn.send_data(sid, body, end_stream=then is None))
        if then:
            send(then)

    def in_one_write(sid, fields, body, end=True):
        """A 200 head with `fields` and `body`, queued together for one write (`send`)."""
        def queue():
            conn.send_headers(sid, [(":status", "200")] + fields)
            conn.send_data(sid, body, end_stream=end)
        return queue

    close_next = False
    paths = {}
    quiet_open = set()
    def closed():
        # Streams still open when the peer closed the connection count as reset.
        with RESETS_LOCK:
            RESETS.extend(paths[sid] + " (connection closed)" for sid in sorted(quiet_open))
        quiet_open.clear()

    while True:
        try:
            data = tls.recv(65536)
        except OSError:
            return closed()
        if not data:
            return closed()
        with lock:
            events = conn.receive_data(data)
            tls.sendall(conn.data_to_send())
        for event in events:
            if isinstance(event, h2.events.StreamReset) and event.stream_id in paths:
                quiet_open.discard(event.stream_id)
                with RESETS_LOCK:
                    RESETS.append(paths[event.stream_id])
            if not isinstance(event, h2.events.RequestReceived):
                continue
            sid = event.stream_id
            path = dict(event.headers).get(":path")
            paths[sid] = path
            if close_next:
                tls.close()
                return
            if path == "/close-next":
                respond(sid, b"ok")
                close_next = True
            elif path == "/refused":
                send(lambda: conn.reset_stream(sid, h2.errors.ErrorCodes.REFUSED_STREAM))
            elif path in ("/refused-once", "/goaway-once"):
                # Unprocessed the first time (RST_STREAM REFUSED_STREAM, or GOAWAY below the
                # stream, RFC 9113 §8.7), 200 "ok" after: an origin rotating its connections.
                with RESETS_LOCK:
                    ONCE[path] = ONCE.get(path, 0) + 1
                    first = ONCE[path] == 1
                if not first:
                    respond(sid, b"ok")
                elif path == "/refused-once":
                    send(lambda: conn.reset_stream(sid, h2.errors.ErrorCodes.REFUSED_STREAM))
                else:
                    send(lambda: conn.close_connection(h2.errors.ErrorCodes.NO_ERROR, last_stream_id=0))
            elif path == "/rst":
                respond(sid, b"partial", then=lambda: conn.reset_stream(sid, h2.errors.ErrorCodes.INTERNAL_ERROR))
            elif path.startswith("/grpc-rst-mid"):
                # A gRPC response's head and one message, then RST_STREAM with ?code=N (an HTTP/2
                # error code): a call the server resets mid-stream.
                code = int(dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(path).query)).get("code", "2"))
                send(lambda: conn.send_headers(sid, [(":status", "200"), ("content-type", "application/grpc")]))
                send(lambda: conn.send_data(sid, b"\x00\x00\x00\x00\x02\x08\x01", end_stream=False))
                send(lambda: conn.reset_stream(sid, code))
            elif path == "/goaway":
                respond(sid, b"bye")
                send(lambda: conn.close_connection(h2.errors.ErrorCodes.NO_ERROR, last_stream_id=sid))
            elif path == "/grpc-goaway-mid":
                # A gRPC response's head and one message, then GOAWAY(INTERNAL_ERROR, "boom") and
                # the connection closed: a call cut mid-stream by the origin.
                send(lambda: conn.send_headers(sid, [(":status", "200"), ("content-type", "application/grpc")]))
                send(lambda: conn.send_data(sid, b"\x00\x00\x00\x00\x02\x08\x01", end_stream=False))
                send(lambda: conn.close_connection(h2.errors.ErrorCodes.INTERNAL_ERROR, additional_data=b"boom"))
                # A FIN after what was sent, not a reset: a close with the proxy's frames unread
                # resets the connection, and the reset can discard the head and GOAWAY before the
                # proxy reads them (under load, CI saw the call answered as never started).
                tls.shutdown(socket.SHUT_WR)
                tls.settimeout(2)
                try:
                    while tls.recv(65536):
                        pass
                except (OSError, ssl.SSLError):
                    pass
                tls.close()
                return closed()
            elif path == "/long-body":
                # A body longer than the content-length it declared (RFC 9113 §8.1.1: malformed).
                send(in_one_write(sid, [("content-type", "text/plain"), ("content-length", "3")], b"too long"))
            elif path == "/burst-error":
                # The head and "partial", then a frame that breaks the connection, in one write:
                # the proxy reads the failure in the same read as the response.
                with lock:
                    conn.send_headers(sid, [(":status", "200"), ("content-type", "text/plain")])
                    conn.send_data(sid, b"partial", end_stream=False)
                    # Then a DATA frame on stream 0, which HTTP/2 forbids (a connection error).
                    tls.sendall(conn.data_to_send() + b"\x00\x00\x01\x00\x00\x00\x00\x00\x00x")
            elif path == "/huge-header":
                # A response head whose header list (70 KiB) is larger than the proxy takes.
                send(in_one_write(sid, [("content-type", "text/plain"), ("x-huge", "h" * 70000)], b"huge"))
            elif path == "/bad-header":
                # A connection-specific field, which HTTP/2 forbids (RFC 9113 §8.2.2: malformed).
                send(in_one_write(sid, [("connection", "close")], b"bad"))
            elif path == "/stuck":
                # The head and part of the body, then silence with the stream open.
                send(in_one_write(sid, [("content-type", "text/plain")], b"part", end=False))
            elif path == "/mute":
                pass   # never answers
            elif path.startswith("/quiet"):
                # An event stream quiet for s seconds between its two events; a stream the peer
                # resets meanwhile is listed by /resets.
                seconds = float(dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(path).query)).get("s", "3"))
                send(lambda: conn.send_headers(sid, [(":status", "200"), ("content-type", "text/event-stream")]))
                send(lambda: conn.send_data(sid, b"data: first\n\n"))
                quiet_open.add(sid)

                def rest(sid=sid):
                    time.sleep(seconds)
                    if sid not in quiet_open:
                        return
                    quiet_open.discard(sid)
                    try:
                        send(lambda: conn.send_data(sid, b"data: second\n\n", end_stream=True))
                    except Exception:
                        pass   # the stream was reset, or the connection closed
                threading.Thread(target=rest, daemon=True).start()
            elif path == "/resets":
                with RESETS_LOCK:
                    respond(sid, "\n".join(RESETS).encode())
            elif path == "/early":
                # A whole answer before the request body is in, then RST_STREAM NO_ERROR: "stop
                # sending, the response is complete" (RFC 9113 §8.1).
                send(in_one_write(sid, [("content-type", "text/plain")], b"early"))
                send(lambda: conn.reset_stream(sid, h2.errors.ErrorCodes.NO_ERROR))
            elif path == "/whole":
                send(in_one_write(sid, [("content-type", "text/plain")], b"whole"))
            elif path == "/early-hints":
                # 103 Early Hints (RFC 8297), a HEADERS frame of its own, then the answer "hinted".
                send(lambda: conn.send_headers(sid, [(":status", "103"), ("link", "</style.css>; rel=preload; as=style")]))
                respond(sid, b"hinted")
            elif path == "/late-body":
                send(lambda: conn.send_headers(sid, [(":status", "200"), ("content-type", "text/plain")]))

                def late(sid=sid):
                    time.sleep(1)
                    send(lambda: conn.send_data(sid, b"late", end_stream=True))
                threading.Thread(target=late, daemon=True).start()
            elif path == "/authority":
                respond(sid, dict(event.headers).get(":authority", "").encode())
            elif path == "/push":
                # Python h2 will not push to a peer that turned push off: the frame is built by hand,
                # its block from the connection's own encoder (its ACK of the peer's SETTINGS went before).
                def promise(sid=sid):
                    frame = hyperframe.frame.PushPromiseFrame(sid, promised_stream_id=2, flags=["END_HEADERS"])
                    frame.data = conn.encoder.encode([(":method", "GET"), (":scheme", "https"),
                                                      (":authority", "localhost"), (":path", "/pushed")])
                    tls.sendall(frame.serialize())
                send(promise)
                respond(sid, b"ok")
            elif path == "/trailers":
                send(lambda: conn.send_headers(sid, [(":status", "200"), ("content-length", "5"),
                                                     ("trailer", "x-checksum")]))
                send(lambda: conn.send_data(sid, b"hello"))
                send(lambda: conn.send_headers(sid, [("x-checksum", "5d41402a")], end_stream=True))
            elif path == "/headers":
                respond(sid, "".join(f"{name}: {value}\n" for name, value in event.headers).encode())
            elif path.startswith("/secured"):
                fields = [(":status", path.partition("status=")[2] or "200"), ("content-type", "text/plain"),
                          ("strict-transport-security", "max-age=31536000"),
                          ("content-security-policy", "default-src 'none'")]
                send(lambda: conn.send_headers(sid, fields))
                lines = "".join(f"{name}: {value}\n" for name, value in event.headers).encode()
                send(lambda: conn.send_data(sid, lines, end_stream=True))
            elif path.startswith("/account"):
                account = b'{"user": "ana", "premium":false}'
                fields = [(":status", "200"), ("content-type", "application/json")]
                if path.endswith("?gzip"):
                    account = gzip.compress(account)
                    fields.append(("content-encoding", "gzip"))
                fields.append(("content-length", str(len(account))))
                send(in_one_write(sid, fields[1:], account))
            elif path == "/slow":
                def later(sid=sid):
                    time.sleep(2)
                    respond(sid, b"slow")
                threading.Thread(target=later, daemon=True).start()
            else:
                respond(sid, b"ok")


def serve_http1(tls):
    """Answers each HTTP/1.1 request (no body expected) 200 "ok", keeping the connection open."""
    pending = b""
    while True:
        try:
            data = tls.recv(65536)
        except OSError:
            return
        if not data:
            return
        pending += data
        while b"\r\n\r\n" in pending:
            _, pending = pending.split(b"\r\n\r\n", 1)
            tls.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok")


def main():
    cert, key = sys.argv[1], sys.argv[2]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["h2"])
    http1_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    http1_context.load_cert_chain(cert, key)
    http1_context.set_alpn_protocols(["http/1.1"])
    then_http1 = "--then-http1" in sys.argv[3:]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)

    connect_protocol_once = "--connect-protocol-once" in sys.argv[3:]
    connections = 0

    def accept():
        nonlocal connections
        while True:
            raw, _ = listener.accept()
            connections += 1
            http1 = then_http1 and connections > 1
            try:
                tls = (http1_context if http1 else context).wrap_socket(raw, server_side=True)
            except (ssl.SSLError, OSError):
                raw.close()
                continue
            if http1:
                threading.Thread(target=serve_http1, args=(tls,), daemon=True).start()
                continue
            enable = connect_protocol_once and connections == 1
            threading.Thread(target=serve_connection, args=(tls, enable), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()


main()
