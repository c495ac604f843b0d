"""A gRPC-Web origin for DevProxy's tests: sonora's ASGI gRPC-Web server (PyPI; installed without
the dependencies of its client, which the tests do not use) under hypercorn, HTTPS with h2 and
HTTP/1.1 in ALPN.

Usage: grpcweb_origin.py CERT KEY [--reflect] [--cleartext]   prints its port on the first line, then
serves until stdin closes (--cleartext: without TLS, HTTP/1.1 and h2 by prior knowledge).
--reflect adds server reflection (grpcio-reflection's asyncio servicer, v1alpha only,
as grpcio has it) describing lab.Echo, served over gRPC-Web as the other methods are: what Envoy's
grpc_web filter in front of a gRPC server with reflection answers a browser's gRPC-Web client.

Methods of lab.Echo, raw protobuf bytes both ways (field 1: string, field 2: varint, as
grpc_echo.py builds them): Unary (echoes; trailing metadata x-trailer: t1), Fail (NOT_FOUND,
"no such thing: 100% gone"), ServerStream (as many small messages as the request's last byte says).
Sonora answers binary requests in binary (`application/grpc-web+proto`) and text requests
(`application/grpc-web-text`) in text, each message base64-encoded by itself.
"""
import sys

import grpc
from sonora.asgi import grpcASGI

from hypercorn_serve import serve_until_stdin_closes


def message(text, number):
    data = text.encode()
    return bytes([0x0A, len(data)]) + data + bytes([0x10, number])


async def unary(request, context):
    context.set_trailing_metadata((("x-trailer", "t1"),))
    return request


async def fail(request, context):
    await context.abort(grpc.StatusCode.NOT_FOUND, "no such thing: 100% gone")


async def server_stream(request, context):
    for i in range(request[-1]):
        yield message("m%d" % i, i)


def identity(data):
    return data


def echo_descriptors():
    """A descriptor pool with lab/echo.proto: lab.Note {string text = 1; int32 number = 2;} and
    lab.Echo's methods above."""
    from google.protobuf import descriptor_pb2, descriptor_pool
    pool = descriptor_pool.DescriptorPool()
    field = descriptor_pb2.FieldDescriptorProto
    echo = descriptor_pb2.FileDescriptorProto(name="lab/echo.proto", package="lab", syntax="proto3")
    note = echo.message_type.add(name="Note")
    for name, number, kind in [("text", 1, field.TYPE_STRING), ("number", 2, field.TYPE_INT32)]:
        note.field.add(name=name, number=number, type=kind, label=field.LABEL_OPTIONAL, json_name=name)
    service = echo.service.add(name="Echo")
    for name, server_streams in [("Unary", False), ("Fail", False), ("ServerStream", True)]:
        service.method.add(name=name, input_type=".lab.Note", output_type=".lab.Note", server_streaming=server_streams)
    pool.Add(echo)
    return pool


def add_reflection(app):
    from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

    class Registrar:
        """What add_ServerReflectionServicer_to_server calls, on sonora's app (which has only the first)."""
        def add_generic_rpc_handlers(self, handlers):
            app.add_generic_rpc_handlers(handlers)

        def add_registered_method_handlers(self, name, handlers):
            app.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))

    servicer = reflection.aio.ReflectionServicer(("lab.Echo", reflection.SERVICE_NAME), pool=echo_descriptors())
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, Registrar())


def main():
    cert, key = sys.argv[1], sys.argv[2]
    handlers = {
        "Unary": grpc.unary_unary_rpc_method_handler(unary, identity, identity),
        "Fail": grpc.unary_unary_rpc_method_handler(fail, identity, identity),
        "ServerStream": grpc.unary_stream_rpc_method_handler(server_stream, identity, identity),
    }
    app = grpcASGI()
    app.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("lab.Echo", handlers),))
    if "--reflect" in sys.argv[3:]:
        add_reflection(app)
    if "--cleartext" in sys.argv[3:]:
        cert = key = None
    serve_until_stdin_closes(app, cert, key)

main()
