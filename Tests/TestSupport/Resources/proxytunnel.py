"""A TLS connection to HOST:PORT through DevProxy's CONNECT, for the scripted h2 peers.

Shared by h2client.py (the h2 library's client) and h2attack.py (frames written by hand).
"""

import socket
import ssl


def connect(proxy_port, cafile, host, port, alpn, timeout=15):
    """Opens CONNECT host:port on the proxy at 127.0.0.1:proxy_port, then TLS with SNI `host`,
    verified against `cafile`, offering the ALPN protocols in `alpn` (a list). Returns the
    TLS socket; the caller checks `selected_alpn_protocol()`."""
    raw = socket.create_connection(("127.0.0.1", int(proxy_port)), timeout=timeout)
    raw.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = raw.recv(1)
        if not chunk:
            raise ConnectionError(f"the proxy closed the connection during CONNECT: {reply!r}")
        reply += chunk
    if not reply.startswith(b"HTTP/1.1 200"):
        raise ConnectionError(f"CONNECT refused: {reply!r}")
    context = ssl.create_default_context(cafile=cafile)
    context.set_alpn_protocols(list(alpn))
    return context.wrap_socket(raw, server_hostname=host)
