"""A gRPC echo service and client (grpcio, PyPI) for DevProxy's tests, without generated code:
methods are registered with raw-bytes handlers, and messages are protobuf bytes built by hand
(field 1: string, field 2: varint), so the proxy's view can be checked against known bytes.

  grpc_echo.py server CERT KEY          prints the port, serves until stdin closes
  grpc_echo.py server-insecure          the same without TLS (h2 by prior knowledge)
  grpc_echo.py server-reflect CERT KEY  the same with TLS and server reflection (grpcio-reflection, v1alpha)
                                        describing lab.Echo in lab/echo.proto, which imports Timestamp
  grpc_echo.py server-insecure-reflect  the same without TLS
  grpc_echo.py server-aging CERT KEY    the same with TLS, each connection closed after 300 ms
                                        (grpc.max_connection_age_ms: GOAWAY, as Kubernetes services do)
  grpc_echo.py client-burst ROOT PORT S Unary calls from 4 threads for S seconds, 2 s deadline; prints JSON
  grpc_echo.py client-burst ROOT PORT S mixed
                                        8 threads alternating client streams (3 messages 20 ms apart)
                                        and unary calls with a 100 KB message; prints JSON
  grpc_echo.py client ROOT PORT         through https_proxy (set by the caller); prints JSON
  grpc_echo.py client-insecure PORT     an insecure channel through https_proxy: unary and bidi
  grpc_echo.py client-quiet ROOT PORT   Quiet (a server stream silent for 2 s before its message); prints JSON
  grpc_echo.py client-ticks ROOT PORT N Ticks with N (a server stream of N messages 0.5 s apart); prints JSON
  grpc_echo.py client-ended ROOT PORT   calls the client ends itself: Ticks with 20, cancelled after its second
                                        message, and Quiet with a 0.5 s deadline; prints JSON of the codes it reports
  grpc_echo.py client-exits ROOT PORT   Ticks with 20, the process gone (os._exit) after its second message
  grpc_echo.py client-big ROOT PORT     Unary with a 3 MiB text, then the same gzip-compressed; prints JSON

Methods of lab.Echo: Unary (echoes, trailing metadata x-trailer: t1), Fail (NOT_FOUND,
trailers-only), Invalid (INVALID_ARGUMENT with a rich status in grpc-status-details-bin), ServerStream (the request's count of 64 KiB + 1 KiB messages), ClientStream
(sums the sizes), Bidi (answers each message as it comes), Quiet (one message after 2 s of silence),
Ticks (the request's count of messages "tick I", one every 0.5 s: a live feed).
"""
import json
import os
import sys
import threading
import time
from concurrent import futures

import grpc


def message(text, number):
    data = text.encode()
    out = bytes([0x0A, len(data)]) + data if len(data) < 128 else bytes([0x0A]) + varint(len(data)) + data
    return out + bytes([0x10]) + varint(number)


def varint(n):
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def unary(request, context):
    context.set_trailing_metadata((("x-trailer", "t1"),))
    return request


def fail(request, context):
    context.abort(grpc.StatusCode.NOT_FOUND, "no such thing: 100% gone")


def field(number, data):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(data)) + data


def any_of(type_name, value):
    return field(1, ("type.googleapis.com/" + type_name).encode()) + field(2, value)


# google.rpc.Status{code: 3, message, details: [BadRequest{field_violations: [{field, description}]}, lab.Note]},
# as grpcio-status's rpc_status.to_status sends it in grpc-status-details-bin.
RICH_STATUS = (bytes([0x08, 3]) + field(2, b"text must not be empty")
               + field(3, any_of("google.rpc.BadRequest",
                                 field(1, field(1, b"text") + field(2, b"must not be empty"))))
               + field(3, any_of("lab.Note", message("why", 4))))


def invalid(request, context):
    context.set_trailing_metadata((("grpc-status-details-bin", RICH_STATUS),))
    context.abort(grpc.StatusCode.INVALID_ARGUMENT, "text must not be empty")


def server_stream(request, context):
    count = request[-1]
    for i in range(count):
        yield message("m%d" % i, i) + b"\x1a" + varint(65 * 1024) + bytes(65 * 1024)


def quiet(request, context):
    # A watch: nothing for two seconds, then one message.
    time.sleep(2)
    yield message("news", 1)


def ticks(request, context):
    # A live feed: the request's count of messages, half a second apart.
    for i in range(request[-1]):
        if i:
            time.sleep(0.5)
        yield message("tick %d" % i, i)


def client_stream(requests, context):
    total = sum(len(r) for r in requests)
    return message("total", total)


def bidi(requests, context):
    for r in requests:
        yield r


def echo_descriptors():
    """A descriptor pool with lab.Echo's file (lab/echo.proto, which imports Timestamp), for server
    reflection (grpcio-reflection): what a server built from a .proto offers grpcurl."""
    from google.protobuf import descriptor_pb2, descriptor_pool, timestamp_pb2
    pool = descriptor_pool.DescriptorPool()
    timestamp = descriptor_pb2.FileDescriptorProto()
    timestamp_pb2.DESCRIPTOR.CopyToProto(timestamp)
    pool.Add(timestamp)
    field = descriptor_pb2.FieldDescriptorProto
    echo = descriptor_pb2.FileDescriptorProto(name="lab/echo.proto", package="lab", syntax="proto3",
                                              dependency=["google/protobuf/timestamp.proto"])
    note = echo.message_type.add(name="Note")
    for name, number, kind, type_name in [("text", 1, field.TYPE_STRING, None), ("number", 2, field.TYPE_INT32, None),
                                          ("payload", 3, field.TYPE_BYTES, None),
                                          ("when", 4, field.TYPE_MESSAGE, ".google.protobuf.Timestamp")]:
        added = note.field.add(name=name, number=number, type=kind, label=field.LABEL_OPTIONAL, json_name=name)
        if type_name:
            added.type_name = type_name
    service = echo.service.add(name="Echo")
    for name, client_streams, server_streams in [("Unary", False, False), ("Fail", False, False),
                                                 ("Invalid", False, False), ("ServerStream", False, True),
                                                 ("Quiet", False, True), ("Ticks", False, True),
                                                 ("ClientStream", True, False), ("Bidi", True, True)]:
        service.method.add(name=name, input_type=".lab.Note", output_type=".lab.Note",
                           client_streaming=client_streams, server_streaming=server_streams)
    pool.Add(echo)
    return pool


def serve(cert, key, insecure=False, options=(), reflect=False):
    handlers = {
        "Unary": grpc.unary_unary_rpc_method_handler(unary),
        "Fail": grpc.unary_unary_rpc_method_handler(fail),
        "Invalid": grpc.unary_unary_rpc_method_handler(invalid),
        "ServerStream": grpc.unary_stream_rpc_method_handler(server_stream),
        "Quiet": grpc.unary_stream_rpc_method_handler(quiet),
        "Ticks": grpc.unary_stream_rpc_method_handler(ticks),
        "ClientStream": grpc.stream_unary_rpc_method_handler(client_stream),
        "Bidi": grpc.stream_stream_rpc_method_handler(bidi),
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=list(options))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("lab.Echo", handlers),))
    if reflect:
        from grpc_reflection.v1alpha import reflection
        reflection.enable_server_reflection(("lab.Echo", reflection.SERVICE_NAME), server, echo_descriptors())
    if insecure:
        port = server.add_insecure_port("127.0.0.1:0")
    else:
        credentials = grpc.ssl_server_credentials([(open(key, "rb").read(), open(cert, "rb").read())])
        port = server.add_secure_port("127.0.0.1:0", credentials)
    server.start()
    print(port, flush=True)
    sys.stdin.read()
    server.stop(0)


def client(root, port):
    credentials = grpc.ssl_channel_credentials(root_certificates=open(root, "rb").read())
    channel = grpc.secure_channel("localhost:%s" % port, credentials)
    results = {}
    call = lambda name, kind: getattr(channel, kind)("/lab.Echo/" + name)
    try:
        response, c = call("Unary", "unary_unary").with_call(message("hello", 7), timeout=10)
        results["unary"] = {"ok": response == message("hello", 7),
                            "trailer": dict(c.trailing_metadata()).get("x-trailer")}
    except grpc.RpcError as e:
        results["unary"] = {"error": str(e.code()), "details": e.details()}
    try:
        call("Fail", "unary_unary")(message("x", 1), timeout=10)
        results["fail"] = {"error": None}
    except grpc.RpcError as e:
        results["fail"] = {"error": e.code().name, "details": e.details()}
    try:
        call("Invalid", "unary_unary")(message("", 1), timeout=10)
        results["invalid"] = {"error": None}
    except grpc.RpcError as e:
        details = dict(e.trailing_metadata()).get("grpc-status-details-bin")
        results["invalid"] = {"error": e.code().name, "details": e.details(), "rich": details == RICH_STATUS}
    try:
        parts = list(call("ServerStream", "unary_stream")(message("n", 20), timeout=20))
        results["server_stream"] = {"count": len(parts), "sizes_ok": all(len(p) > 65 * 1024 for p in parts)}
    except grpc.RpcError as e:
        results["server_stream"] = {"error": str(e.code()), "details": e.details()}
    try:
        response = call("ClientStream", "stream_unary")(iter([message("a" * 100, i) for i in range(10)]), timeout=10)
        results["client_stream"] = {"ok": response.startswith(message("total", 0)[:7])}
    except grpc.RpcError as e:
        results["client_stream"] = {"error": str(e.code()), "details": e.details()}
    try:
        # Ping-pong: the next message is sent only after the previous answer came back, which
        # deadlocks a proxy that buffers the request until it ends.
        pending = []
        condition = threading.Condition()
        def requests():
            for i in range(5):
                with condition:
                    pending.append(i)
                yield message("ping", i)
                with condition:
                    condition.wait_for(lambda: not pending, timeout=5)
        start = time.time()
        answers = 0
        for _ in call("Bidi", "stream_stream")(requests(), timeout=10):
            answers += 1
            with condition:
                pending.clear()
                condition.notify_all()
        results["bidi"] = {"answers": answers, "seconds": round(time.time() - start, 3)}
    except grpc.RpcError as e:
        results["bidi"] = {"error": str(e.code()), "details": e.details()}
    try:
        response = call("Unary", "unary_unary")(message("zipped " * 50, 3), timeout=10, compression=grpc.Compression.Gzip)
        results["gzip"] = {"ok": response == message("zipped " * 50, 3)}
    except grpc.RpcError as e:
        results["gzip"] = {"error": str(e.code()), "details": e.details()}
    print(json.dumps(results))


def client_quiet(root, port):
    credentials = grpc.ssl_channel_credentials(root_certificates=open(root, "rb").read())
    channel = grpc.secure_channel("localhost:%s" % port, credentials)
    try:
        parts = list(channel.unary_stream("/lab.Echo/Quiet")(message("w", 1), timeout=10))
        print(json.dumps({"quiet": {"count": len(parts)}}))
    except grpc.RpcError as e:
        print(json.dumps({"quiet": {"error": e.code().name, "details": e.details()}}))


def client_ticks(root, port, count):
    credentials = grpc.ssl_channel_credentials(root_certificates=open(root, "rb").read())
    channel = grpc.secure_channel("localhost:%s" % port, credentials)
    try:
        parts = list(channel.unary_stream("/lab.Echo/Ticks")(message("feed", int(count)), timeout=30))
        print(json.dumps({"ticks": {"count": len(parts)}}))
    except grpc.RpcError as e:
        print(json.dumps({"ticks": {"error": e.code().name, "details": e.details()}}))


def client_ended(root, port):
    credentials = grpc.ssl_channel_credentials(root_certificates=open(root, "rb").read())
    channel = grpc.secure_channel("localhost:%s" % port, credentials)
    results = {}
    ticks = channel.unary_stream("/lab.Echo/Ticks")(message("feed", 20), timeout=30)
    try:
        for i, _ in enumerate(ticks):
            if i == 1:
                ticks.cancel()
    except grpc.RpcError as e:
        results["cancelled"] = e.code().name
    try:
        list(channel.unary_stream("/lab.Echo/Quiet")(message("w", 1), timeout=0.5))
    except grpc.RpcError as e:
        results["deadline"] = e.code().name
    print(json.dumps(results))


def client_exits(root, port):
    credentials = grpc.ssl_channel_credentials(root_certificates=open(root, "rb").read())
    channel = grpc.secure_channel("localhost:%s" % port, credentials)
    for i, _ in enumerate(channel.unary_stream("/lab.Echo/Ticks")(message("feed", 20), timeout=30)):
        if i == 1:
            print(json.dumps({"exited_after": 2}), flush=True)
            os._exit(0)


def client_big(root, port):
    credentials = grpc.ssl_channel_credentials(root_certificates=open(root, "rb").read())
    channel = grpc.secure_channel("localhost:%s" % port, credentials)
    big = message("a" * (3 << 20), 1)
    results = {}
    for name, compression in [("plain", None), ("gzip", grpc.Compression.Gzip)]:
        try:
            results[name] = channel.unary_unary("/lab.Echo/Unary")(big, timeout=20, compression=compression) == big
        except grpc.RpcError as e:
            results[name] = e.code().name
    print(json.dumps(results))


def paced(count, gap):
    for i in range(count):
        if i:
            time.sleep(gap)
        yield message("s" * 1000, i)


def client_burst(root, port, seconds, shape="unary"):
    credentials = grpc.ssl_channel_credentials(root_certificates=open(root, "rb").read())
    channel = grpc.secure_channel("localhost:%s" % port, credentials)
    counts = {"ok": 0, "errors": {}}
    lock = threading.Lock()
    end = time.time() + float(seconds)

    def worker():
        turn = 0
        while time.time() < end:
            turn += 1
            try:
                if shape == "mixed" and turn % 2:
                    channel.stream_unary("/lab.Echo/ClientStream")(paced(3, 0.02), timeout=5)
                elif shape == "mixed":
                    channel.unary_unary("/lab.Echo/Unary")(message("b" * 100000, 1), timeout=5)
                else:
                    channel.unary_unary("/lab.Echo/Unary")(message("burst", 1), timeout=2)
                with lock:
                    counts["ok"] += 1
            except grpc.RpcError as e:
                with lock:
                    counts["errors"][e.code().name] = counts["errors"].get(e.code().name, 0) + 1
    threads = [threading.Thread(target=worker) for _ in range(8 if shape == "mixed" else 4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps(counts))


def client_insecure(port):
    channel = grpc.insecure_channel("localhost:%s" % port)
    results = {}
    try:
        response, c = channel.unary_unary("/lab.Echo/Unary").with_call(message("plain", 9), timeout=10)
        results["unary"] = {"ok": response == message("plain", 9), "trailer": dict(c.trailing_metadata()).get("x-trailer")}
    except grpc.RpcError as e:
        results["unary"] = {"error": str(e.code()), "details": e.details()}
    try:
        answers = list(channel.stream_stream("/lab.Echo/Bidi")(iter([message("b", i) for i in range(3)]), timeout=10))
        results["bidi"] = {"answers": len(answers)}
    except grpc.RpcError as e:
        results["bidi"] = {"error": str(e.code()), "details": e.details()}
    print(json.dumps(results))


if sys.argv[1] == "server":
    serve(sys.argv[2], sys.argv[3])
elif sys.argv[1] == "server-reflect":
    serve(sys.argv[2], sys.argv[3], reflect=True)
elif sys.argv[1] == "server-insecure-reflect":
    serve(None, None, insecure=True, reflect=True)
elif sys.argv[1] == "server-insecure":
    serve(None, None, insecure=True)
elif sys.argv[1] == "server-aging":
    serve(sys.argv[2], sys.argv[3], options=[("grpc.max_connection_age_ms", 300),
                                             ("grpc.max_connection_age_grace_ms", 2000)])
elif sys.argv[1] == "client-burst":
    client_burst(*sys.argv[2:6])
elif sys.argv[1] == "client-insecure":
    client_insecure(sys.argv[2])
elif sys.argv[1] == "client-quiet":
    client_quiet(sys.argv[2], sys.argv[3])
elif sys.argv[1] == "client-ended":
    client_ended(sys.argv[2], sys.argv[3])
elif sys.argv[1] == "client-exits":
    client_exits(sys.argv[2], sys.argv[3])
elif sys.argv[1] == "client-big":
    client_big(sys.argv[2], sys.argv[3])
elif sys.argv[1] == "client-ticks":
    client_ticks(sys.argv[2], sys.argv[3], sys.argv[4])
else:
    client(sys.argv[2], sys.argv[3])
