"""A gRPC-Web origin for DevProxy's tests: sonora's ASGI gRPC-Web server (PyPI; installed without
the dependencies of its client, which the tests do not use) under hypercorn, HTTPS with h2 and
HTTP/1.1 in ALPN.

Usage: grpcweb_origin.py CERT KEY   prints its port on the first line, then serves until stdin closes.

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


def main():
    cert, key = sys.argv[1], sys.argv[2]
    handlers = {
        "Unary": grpc.unary_unary_rpc_method_handler(unary, identity, identity),
        "Fail": grpc.unary_unary_rpc_method_handler(fail, identity, identity),
        "ServerStream": grpc.unary_stream_rpc_method_handler(server_stream, identity, identity),
    }
    app = grpcASGI()
    app.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("lab.Echo", handlers),))
    serve_until_stdin_closes(app, cert, key)

main()
