"""A WebSocket over HTTP/2 (RFC 8441) through DevProxy, with the h2 library (PyPI) as the client:
CONNECT through the proxy, TLS offering only h2, then an extended CONNECT once the server's
SETTINGS allow it, text messages out and their echoes back, a close handshake.

Usage: h2websocket.py PROXY_PORT CAFILE HOST PORT PATH [--deflate] [--message TEXT ...] [--wait-settings S]
       [--pause S] [--message-size N ...]
--deflate offers permessage-deflate (sent uncompressed; the server's messages may come compressed,
as hypercorn sends them when it accepts). --wait-settings S: how long to wait for
SETTINGS_ENABLE_CONNECT_PROTOCOL (default 5 s); without it, the extended CONNECT is not sent.
--pause S: send the messages one at a time, each S seconds after the echo of the one before
(default: all at once). --first-get PATH: on the same connection, GET PATH first (its whole
answer read; `first_get_status`), then wait --after-get S seconds (default 0.5) before the
extended CONNECT.
Prints one JSON object: alpn, settings (the server's SETTINGS as received, every frame),
extended_connect (whether it was enabled), status, headers, received (the messages that came
back: opcode and text), close_code, stream_ended (the server ended the stream after the close
handshake), reset (RST_STREAM code, if any), stream_id, and for an answer other than 200 its body.
"""
import argparse
import json
import os
import struct
import time
import zlib

import h2.config
import h2.connection
import h2.events
import h2.settings
import proxytunnel

ENABLE_CONNECT_PROTOCOL = h2.settings.SettingCodes.ENABLE_CONNECT_PROTOCOL


def frame(opcode, payload):
    """A client frame (RFC 6455 §5.2): FIN, masked."""
    head = bytes([0x80 | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack(">H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", n)
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


class Frames:
    """Server frames (unmasked) out of a byte stream, permessage-deflate messages inflated."""

    def __init__(self):
        self.buffer = b""
        self.inflater = zlib.decompressobj(-15)

    def feed(self, data):
        self.buffer += data
        out = []
        while len(self.buffer) >= 2:
            b0, b1 = self.buffer[0], self.buffer[1]
            n = b1 & 0x7F
            at = 2
            if n == 126:
                if len(self.buffer) < 4:
                    break
                n = struct.unpack(">H", self.buffer[2:4])[0]
                at = 4
            elif n == 127:
                if len(self.buffer) < 10:
                    break
                n = struct.unpack(">Q", self.buffer[2:10])[0]
                at = 10
            if len(self.buffer) < at + n:
                break
            payload = self.buffer[at:at + n]
            self.buffer = self.buffer[at + n:]
            opcode = b0 & 0x0F
            if b0 & 0x40:
                payload = self.inflater.decompress(payload + b"\x00\x00\xff\xff")
            out.append((opcode, payload))
        return out


class Outbox:
    """What the client has to send on its stream, sent as the peer's window and frame size allow
    (a message longer than a frame goes in several DATA frames); END_STREAM after the last."""

    def __init__(self, conn, stream):
        self.conn, self.stream = conn, stream
        self.pending = b""
        self.ending = False

    def put(self, data):
        self.pending += data

    def end(self):
        self.ending = True

    def flush(self):
        while self.pending:
            room = min(self.conn.local_flow_control_window(self.stream), self.conn.max_outbound_frame_size)
            if room <= 0:
                return
            self.conn.send_data(self.stream, self.pending[:room])
            self.pending = self.pending[room:]
        if self.ending:
            self.conn.end_stream(self.stream)
            self.ending = False


def arguments():
    parser = argparse.ArgumentParser(description="A WebSocket over HTTP/2 through DevProxy.")
    for name in ("proxy_port", "cafile", "host", "port", "path"):
        parser.add_argument(name)
    parser.add_argument("--deflate", action="store_true")
    parser.add_argument("--message", action="append", default=[])
    parser.add_argument("--message-size", type=int, action="append", default=[],
                        help="a message of this many bytes of 0123456789 repeated, after the --message ones")
    parser.add_argument("--pause", type=float)
    parser.add_argument("--wait-settings", type=float, default=5.0)
    parser.add_argument("--first-get")
    parser.add_argument("--after-get", type=float, default=0.5)
    return parser.parse_args()


def first_get(conn, tls, authority, path):
    """GET `path` on a stream of its own and read its whole answer; its status (None if it never came)."""
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, [(":method", "GET"), (":scheme", "https"), (":path", path), (":authority", authority)],
                      end_stream=True)
    tls.sendall(conn.data_to_send())
    status = None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        data = received_data(tls)
        if data is None:
            continue
        if not data:
            break
        done = False
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                status = int(dict(event.headers)[":status"])
            elif isinstance(event, h2.events.DataReceived) and event.stream_id == stream:
                conn.acknowledge_received_data(event.flow_controlled_length, stream)
            elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)) and event.stream_id == stream:
                done = True
        tls.sendall(conn.data_to_send())
        if done:
            break
    return status


def received_data(tls):
    """The next bytes from the server: empty when it closed, None when it stayed silent past the
    socket's timeout."""
    try:
        return tls.recv(65536)
    except TimeoutError:
        return None


def main():
    options = arguments()
    proxy_port, cafile, host, port, path = (options.proxy_port, options.cafile, options.host, options.port,
                                            options.path)
    deflate, messages, pause, wait_settings = options.deflate, options.message, options.pause, options.wait_settings
    messages += [("0123456789" * (size // 10 + 1))[:size] for size in options.message_size]
    tls = proxytunnel.connect(proxy_port, cafile, host, port, ["h2"])
    result = {"alpn": tls.selected_alpn_protocol(), "settings": [], "extended_connect": False}
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    tls.sendall(conn.data_to_send())
    tls.settimeout(0.2)
    deadline = time.monotonic() + wait_settings
    while not result["extended_connect"] and time.monotonic() < deadline:
        data = received_data(tls)
        if data is None:
            continue
        if not data:
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.RemoteSettingsChanged):
                result["settings"].append({int(k): v.new_value for k, v in event.changed_settings.items()})
                if conn.remote_settings.get(ENABLE_CONNECT_PROTOCOL) == 1:
                    result["extended_connect"] = True
        tls.sendall(conn.data_to_send())
    if not result["extended_connect"]:
        print(json.dumps(result))
        return
    if options.first_get:
        result["first_get_status"] = first_get(conn, tls, f"{host}:{port}", options.first_get)
        time.sleep(options.after_get)
    stream = conn.get_next_available_stream_id()
    result["stream_id"] = stream
    headers = [(":method", "CONNECT"), (":protocol", "websocket"), (":scheme", "https"), (":path", path),
               (":authority", f"{host}:{port}"), ("sec-websocket-version", "13")]
    if deflate:
        headers.append(("sec-websocket-extensions", "permessage-deflate"))
    conn.send_headers(stream, headers)
    tls.sendall(conn.data_to_send())
    frames = Frames()
    outbox = Outbox(conn, stream)
    received = []
    sent = 0
    closing = False
    ended = False
    tls.settimeout(10)
    while not ended:
        data = received_data(tls)
        if not data:
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                result["headers"] = [[k, v] for k, v in event.headers if not k.startswith(":")]
                result["status"] = int(dict(event.headers)[":status"])
            elif isinstance(event, h2.events.DataReceived) and event.stream_id == stream:
                conn.acknowledge_received_data(event.flow_controlled_length, stream)
                if result.get("status") != 200:
                    # A refusal's body: why there is no socket.
                    result["body"] = result.get("body", "") + event.data.decode("utf-8", "replace")
                    continue
                for opcode, payload in frames.feed(event.data):
                    if opcode == 8:
                        result["close_code"] = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else None
                        if not closing:
                            outbox.put(frame(8, payload[:2]))
                        # RFC 8441 §5: the close handshake, then END_STREAM both ways.
                        outbox.end()
                        tls.settimeout(2)
                    else:
                        received.append({"opcode": opcode, "text": payload.decode("utf-8", "replace")})
            elif isinstance(event, h2.events.StreamEnded) and event.stream_id == stream:
                result["stream_ended"] = True
                ended = True
            elif isinstance(event, h2.events.StreamReset) and event.stream_id == stream:
                result["reset"] = event.error_code
                ended = True
        if result.get("status") == 200 and not ended:
            while sent < len(messages) and (pause is None or len(received) == sent):
                if pause is not None and sent > 0:
                    time.sleep(pause)
                outbox.put(frame(1, messages[sent].encode()))
                sent += 1
                if pause is not None:
                    break
        if sent == len(messages) and result.get("status") == 200 and not closing and not ended \
                and len(received) >= len(messages):
            closing = True
            outbox.put(frame(8, struct.pack(">H", 1000)))
        outbox.flush()
        tls.sendall(conn.data_to_send())
    result["received"] = received
    try:
        conn.close_connection()
        tls.sendall(conn.data_to_send())
        tls.close()
    except OSError:
        pass
    print(json.dumps(result))


if __name__ == "__main__":
    main()
