"""A scripted HTTP/2 client (Python h2, PyPI) for DevProxy's tests: CONNECT through the proxy,
TLS offering only the ALPN protocols given, then requests on one connection.

Usage: h2client.py PROXY_PORT CAFILE HOST PORT ALPN PATH [name=value ...] [--body TEXT] [--count N]
       [--reset-after-headers] [--then PATH] [--then-method METHOD] [--rapid-reset N] [--hold-body]
--hold-body sends a POST's HEADERS without END_STREAM and then nothing: a client waiting to hear back first.
--host-only names the host with a `host` field instead of `:authority` (RFC 9113 §8.3.1 allows either).
--connect sends a plain CONNECT (`:method` and `:authority` alone, RFC 9113 §8.5) for PATH's authority.
--body-size N sends a body of N bytes ("a"). --method METHOD sends the first requests with it. --then PATH sends a second request (GET, or --then-method's, without a body) on the same
connection once the first ones finished.
--rapid-reset N opens and cancels N streams as fast as it can (CVE-2023-44487) and reports the
GOAWAY it got (or none) and how many responses came back.
Prints one JSON object: alpn, and per request: status, headers, body, trailers, reset (the
RST_STREAM code received, if any), informational (the 1xx heads before the response), goaway.
"""
import json
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import proxytunnel


def main():
    args = sys.argv[1:]
    proxy_port, cafile, host, port, alpn, path = args[:6]
    rest = args[6:]
    body = None
    count = 1
    reset_after_headers = False
    then = None
    then_method = "GET"
    method = None
    rapid = 0
    hold = False
    host_only = False
    connect = False
    authority = None
    fields = []
    i = 0
    while i < len(rest):
        if rest[i] == "--body":
            body = rest[i + 1].encode()
            i += 2
        elif rest[i] == "--body-size":
            body = b"a" * int(rest[i + 1])
            i += 2
        elif rest[i] == "--count":
            count = int(rest[i + 1])
            i += 2
        elif rest[i] == "--rapid-reset":
            rapid = int(rest[i + 1])
            i += 2
        elif rest[i] == "--then":
            then = rest[i + 1]
            i += 2
        elif rest[i] == "--then-method":
            then_method = rest[i + 1]
            i += 2
        elif rest[i] == "--method":
            method = rest[i + 1]
            i += 2
        elif rest[i] == "--authority":
            # The request's :authority as given (grpc's ssl_target_name_override sends no port).
            authority = rest[i + 1]
            i += 2
        elif rest[i] == "--connect":
            connect = True
            i += 1
        elif rest[i] == "--host-only":
            host_only = True
            i += 1
        elif rest[i] == "--hold-body":
            hold = True
            i += 1
        elif rest[i] == "--reset-after-headers":
            reset_after_headers = True
            i += 1
        else:
            name, _, value = rest[i].partition("=")
            fields.append((name, value))
            i += 1
    tls = proxytunnel.connect(proxy_port, cafile, host, port, alpn.split(","))
    result = {"alpn": tls.selected_alpn_protocol(), "responses": []}
    if tls.selected_alpn_protocol() != "h2":
        print(json.dumps(result))
        return
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    tls.sendall(conn.data_to_send())
    if rapid:
        print(json.dumps(rapid_reset(conn, tls, host, port, path, rapid)))
        return
    streams = {}
    # Request bodies still to send, by stream: they go as the server's windows allow.
    uploads = {}
    for _ in range(count):
        sid = conn.get_next_available_stream_id()
        if connect:
            conn.send_headers(sid, [(":method", "CONNECT"), (":authority", path)], end_stream=False)
            streams[sid] = {"status": None, "headers": [], "body": b"", "trailers": [], "reset": None,
                            "informational": []}
            continue
        named = ("host", f"{host}:{port}") if host_only else (":authority", authority or f"{host}:{port}")
        headers = [(":method", method or ("POST" if body is not None or hold else "GET")), (":scheme", "https"),
                   (":path", path)]
        headers = headers + [named] + fields if host_only else headers[:2] + [named] + headers[2:] + fields
        conn.send_headers(sid, headers, end_stream=body is None and not hold)
        if body is not None:
            uploads[sid] = memoryview(body)
        streams[sid] = {"status": None, "headers": [], "body": b"", "trailers": [], "reset": None,
                            "informational": []}
    pump_uploads(conn, uploads)
    tls.sendall(conn.data_to_send())
    open_streams = set(streams)
    goaway = None
    while open_streams:
        data = tls.recv(65536)
        if not data:
            break
        try:
            events = conn.receive_data(data)
        except h2.exceptions.ProtocolError:
            # Python h2 closes its state machine on GOAWAY and refuses the frames of the streams
            # a graceful GOAWAY lets finish; what was seen until then is reported.
            if goaway is None:
                raise
            break
        for event in events:
            if isinstance(event, h2.events.ResponseReceived):
                s = streams[event.stream_id]
                s["status"] = int(dict(event.headers)[":status"])
                s["headers"] = [[k, v] for k, v in event.headers]
                if reset_after_headers:
                    conn.reset_stream(event.stream_id, 8)
                    open_streams.discard(event.stream_id)
            elif isinstance(event, h2.events.InformationalResponseReceived):
                streams[event.stream_id]["informational"].append([[k, v] for k, v in event.headers])
            elif isinstance(event, h2.events.DataReceived):
                streams[event.stream_id]["body"] += event.data
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.TrailersReceived):
                streams[event.stream_id]["trailers"] = [[k, v] for k, v in event.headers]
            elif isinstance(event, h2.events.StreamEnded):
                open_streams.discard(event.stream_id)
            elif isinstance(event, h2.events.StreamReset):
                streams[event.stream_id]["reset"] = int(event.error_code)
                open_streams.discard(event.stream_id)
                uploads.pop(event.stream_id, None)
            elif isinstance(event, h2.events.ConnectionTerminated):
                goaway = int(event.error_code)
                last = event.last_stream_id if event.last_stream_id is not None else 0
                open_streams = {sid for sid in open_streams if sid <= last}
        pump_uploads(conn, uploads)
        tls.sendall(conn.data_to_send())
        if not open_streams and then is not None and goaway is None:
            # A second request on the same connection, after the first finished.
            sid = conn.get_next_available_stream_id()
            conn.send_headers(sid, [(":method", then_method), (":scheme", "https"), (":authority", f"{host}:{port}"),
                                    (":path", then)], end_stream=True)
            streams[sid] = {"status": None, "headers": [], "body": b"", "trailers": [], "reset": None,
                            "informational": []}
            open_streams.add(sid)
            then = None
            tls.sendall(conn.data_to_send())
    if reset_after_headers:
        # Stay connected a moment, as an app that cancels one request and goes on would.
        time.sleep(2)
    for sid in sorted(streams):
        s = streams[sid]
        s["body"] = s["body"].decode("latin-1")
        result["responses"].append(s)
    result["goaway"] = goaway
    print(json.dumps(result))


def pump_uploads(conn, uploads):
    """Sends what the windows allow of each pending request body, ending each when all went."""
    for sid in list(uploads):
        rest = uploads[sid]
        try:
            while len(rest):
                room = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size, len(rest))
                if room <= 0:
                    break
                conn.send_data(sid, rest[:room].tobytes(), end_stream=room == len(rest))
                rest = rest[room:]
        except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
            rest = memoryview(b"")
        if len(rest):
            uploads[sid] = rest
        else:
            del uploads[sid]


def rapid_reset(conn, tls, host, port, path, count):
    """Opens and resets `count` streams without waiting, then reads until GOAWAY or EOF."""
    sent = 0
    goaway = None
    try:
        for _ in range(count):
            sid = conn.get_next_available_stream_id()
            conn.send_headers(sid, [(":method", "GET"), (":scheme", "https"), (":authority", f"{host}:{port}"),
                                    (":path", path)])
            conn.reset_stream(sid, 8)
            sent += 1
            if sent % 100 == 0:
                tls.sendall(conn.data_to_send())
        tls.sendall(conn.data_to_send())
    except (OSError, h2.exceptions.ProtocolError):
        pass
    tls.settimeout(10)
    try:
        while goaway is None:
            data = tls.recv(65536)
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.ConnectionTerminated):
                    goaway = int(event.error_code)
    except (OSError, h2.exceptions.ProtocolError):
        pass
    return {"alpn": "h2", "responses": [], "goaway": goaway, "sent": sent}


main()
