"""Whether UDP 443 gets through, for DevProxy's transparent-mode tests: run as root inside the test's
network namespace. A UDP echo listens on ADDRESS:443 for each address given; a client sends one
datagram to each, as `nobody` and as root, and the script prints one line per try:
`USER ADDRESS pong|blocked|refused|timeout` (blocked: the send itself failed with EPERM, as a REJECT
in the OUTPUT chain makes it for local sockets; refused: an ICMP port unreachable came back).

Usage: udp_reach.py ADDRESS...
"""
import socket
import subprocess
import sys
import threading

CLIENT = """
import socket, sys
family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(family, socket.SOCK_DGRAM)
s.settimeout(3)
s.connect((sys.argv[1], 443))
try:
    s.send(b"ping")
    print(s.recv(16).decode())
except PermissionError:
    print("blocked")
except ConnectionRefusedError:
    print("refused")
except socket.timeout:
    print("timeout")
"""


def echo(address):
    server = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_DGRAM)
    server.bind((address, 443))

    def serve():
        while True:
            _, peer = server.recvfrom(16)
            server.sendto(b"pong", peer)

    threading.Thread(target=serve, daemon=True).start()


addresses = sys.argv[1:]
for address in addresses:
    echo(address)
nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
for address in addresses:
    for name, user in [("nobody", nobody), ("root", [])]:
        run = subprocess.run(user + [sys.executable, "-c", CLIENT, address], capture_output=True, text=True,
                             timeout=10)
        print(name, address, run.stdout.strip() or run.stderr.strip().splitlines()[-1:])
