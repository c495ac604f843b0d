"""Carries UDP between a network namespace's loopback and this one's, for a device namespace
that must reach a server on 127.0.0.1 here without a veth pair.

    netns_udp_relay.py NAMESPACE PORT

A socket here is connected to 127.0.0.1:PORT; then the process joins NAMESPACE (setns(2)) and
binds 127.0.0.1:PORT there. What a program in the namespace sends to that address goes to the
server, from this process's port; the server's answers go back to whoever in the namespace sent
last. It prints `ready` once both sockets are open and ends when its standard input closes.

A veth pair would put an address on a new interface of this namespace, and every headless
Chromium running here at that moment drops what it is loading with ERR_NETWORK_CHANGED.
"""
import ctypes
import os
import select
import socket
import sys

CLONE_NEWNET = 0x40000000

namespace, port = sys.argv[1], int(sys.argv[2])
outer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
outer.connect(("127.0.0.1", port))
libc = ctypes.CDLL(None, use_errno=True)
handle = os.open("/run/netns/" + namespace, os.O_RDONLY)
if libc.setns(handle, CLONE_NEWNET) != 0:
    raise SystemExit("setns %s: %s" % (namespace, os.strerror(ctypes.get_errno())))
os.close(handle)
inner = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
inner.bind(("127.0.0.1", port))
print("ready", flush=True)

sender = None
while True:
    readable, _, _ = select.select([outer, inner, sys.stdin], [], [])
    if sys.stdin in readable and not os.read(sys.stdin.fileno(), 4096):
        break
    try:
        if inner in readable:
            data, sender = inner.recvfrom(65536)
            outer.send(data)
        if outer in readable:
            data = outer.recv(65536)
            if sender is not None:
                inner.sendto(data, sender)
    except OSError:
        # The server is not there (yet, or any more): ICMP port unreachable comes back as an
        # error on the connected socket; the datagram is lost, as it would be on a network.
        pass
