"""An HTTPS origin for DevProxy's HTTP/2 tests, served by hypercorn (PyPI) on 127.0.0.1.

Usage: h2origin.py CERT KEY ALPN [CLIENT_CA]   (ALPN: "h2,http/1.1" or "http/1.1"; CLIENT_CA: require a
client certificate issued by it, as an mTLS origin does; ALPN "cleartext": no TLS, HTTP/1.1 and h2 by
prior knowledge)
Prints its port on the first line, then serves until stdin closes.

Routes:
  /echo       JSON of what arrived: http_version, method, path, headers (list of pairs), body
  /big?n=N    N bytes of a repeating pattern
  /trailers   "body" then the trailer x-checksum: abc123 (when the client sent te: trailers)
  /alt-svc    "alt" with two Alt-Svc fields advertising HTTP/3 (h3, h3-29, quic) beside an h2 alternative
  /secured?status=N  as /echo, answered with status N (200 when left out) and the security headers a
              --modify-headers rule on responses removes: Strict-Transport-Security, Content-Security-Policy
  /account    '{"user": "ana", "premium":false}' (Content-Length); /account?gzip: gzip-coded; ?chunked: in two
              parts without a length (HTTP/1.1: chunked) -- what a --modify-body rule edits
  /events     text/event-stream: 'data: "premium":false', then, 3 s later, a second event
  /ws         WebSocket (HTTP/1.1 upgrade): each text message comes back as "echo:" + it; hypercorn
              (wsproto) accepts permessage-deflate when the client offers it
"""
import asyncio
import gzip
import json
import sys

from hypercorn_serve import serve_until_stdin_closes


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] == "websocket":
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        while True:
            message = await receive()
            if message["type"] != "websocket.receive":
                return
            await send({"type": "websocket.send", "text": "echo:" + (message.get("text") or "")})
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    path = scope["path"]
    headers = [[k.decode("latin-1"), v.decode("latin-1")] for k, v in scope["headers"]]
    if path == "/big":
        n = int(scope["query_string"].decode().partition("=")[2] or "0")
        pattern = b"0123456789abcdef" * 4096
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/octet-stream")]})
        sent = 0
        while sent < n:
            piece = pattern[: min(len(pattern), n - sent)]
            sent += len(piece)
            await send({"type": "http.response.body", "body": piece, "more_body": sent < n})
        if n == 0:
            await send({"type": "http.response.body", "body": b""})
        return
    if path == "/account":
        query = scope["query_string"].decode()
        account = b'{"user": "ana", "premium":false}'
        fields = [(b"content-type", b"application/json")]
        if query == "gzip":
            account = gzip.compress(account)
            fields.append((b"content-encoding", b"gzip"))
        if query == "chunked":
            await send({"type": "http.response.start", "status": 200, "headers": fields})
            await send({"type": "http.response.body", "body": account[:12], "more_body": True})
            await asyncio.sleep(0.05)
            await send({"type": "http.response.body", "body": account[12:]})
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": fields + [(b"content-length", str(len(account)).encode())]})
        await send({"type": "http.response.body", "body": account})
        return
    if path == "/events":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]})
        await send({"type": "http.response.body", "body": b'data: "premium":false\n\n', "more_body": True})
        await asyncio.sleep(3)
        await send({"type": "http.response.body", "body": b"data: second\n\n"})
        return
    if path == "/trailers":
        await send({"type": "http.response.start", "status": 200, "trailers": True,
                    "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"body", "more_body": False})
        await send({"type": "http.response.trailers", "headers": [(b"x-checksum", b"abc123")], "more_trailers": False})
        return
    if path == "/alt-svc":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/plain"), (b"content-length", b"3"),
                                (b"alt-svc", b'h3=":443"; ma=86400, h2="alt.test:8443"; ma=60, h3-29=":443"'),
                                (b"alt-svc", b'quic=":443"; ma=2592000; v="46,43"')]})
        await send({"type": "http.response.body", "body": b"alt"})
        return
    status, extra = 200, []
    if path == "/secured":
        status = int(scope["query_string"].decode().partition("=")[2] or "200")
        extra = [(b"strict-transport-security", b"max-age=31536000"),
                 (b"content-security-policy", b"default-src 'none'")]
    payload = json.dumps({"http_version": scope["http_version"], "method": scope["method"], "path": path,
                          "query": scope["query_string"].decode(), "headers": headers,
                          "body": body.decode("latin-1")}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
                + extra})
    await send({"type": "http.response.body", "body": payload})


def main():
    cert, key, alpn = sys.argv[1], sys.argv[2], sys.argv[3]
    if alpn == "cleartext":
        serve_until_stdin_closes(app)
    else:
        serve_until_stdin_closes(app, cert, key, alpn.split(","), sys.argv[4] if len(sys.argv) > 4 else None)


main()
