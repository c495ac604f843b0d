"""Serving an ASGI app with hypercorn for the tests' origins (h2origin.py, grpcweb_origin.py): on
127.0.0.1 at a free port, which is printed on the first line, until stdin closes."""
import asyncio
import socket
import ssl
import sys
import threading

from hypercorn.asyncio import serve
from hypercorn.config import Config


def serve_until_stdin_closes(app, cert=None, key=None, alpn=("h2", "http/1.1"), client_ca=None):
    """TLS with `cert`, `key` and `alpn` unless `cert` is None (then HTTP/1.1 and h2 by prior
    knowledge, no TLS); `client_ca` requires a client certificate issued by it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    listener.set_inheritable(True)
    config = Config()
    config.bind = [f"fd://{listener.fileno()}"]
    if cert is not None:
        config.certfile = cert
        config.keyfile = key
        config.alpn_protocols = list(alpn)
    if client_ca is not None:
        config.ca_certs = client_ca
        config.verify_mode = ssl.CERT_REQUIRED
    config.accesslog = None
    config.errorlog = None
    print(listener.getsockname()[1], flush=True)
    stop = asyncio.Event()
    loop = asyncio.new_event_loop()

    def watch_stdin():
        sys.stdin.read()
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=watch_stdin, daemon=True).start()
    loop.run_until_complete(serve(app, config, shutdown_trigger=stop.wait))
