#!/usr/bin/env python3
"""GraphQL subscriptions over WebSocket for DevProxy's tests, both ends.

`graphql_ws.py serve`: an origin (hypercorn, ASGI, plain HTTP/1.1 on 127.0.0.1) whose schema
graphql-core executes. At /graphql it accepts the subprotocol the client offers of
`graphql-transport-ws` (the graphql-ws library's protocol) and `graphql-ws` (the older
subscriptions-transport-ws protocol) and speaks it: `subscribe`/`start` run the operation
(a subscription streams `next`/`data` messages, a query or mutation sends one), an invalid
document is answered with `error`. At /plain it accepts no subprotocol and echoes each message.
Prints its port on the first line; stops when stdin closes.

`graphql_ws.py client PROXY_PORT ORIGIN_PORT PATH SUBPROTOCOL JSON`: a client (wsproto over a
socket) that sends its upgrade through the HTTP proxy at 127.0.0.1:PROXY_PORT in absolute form,
offering SUBPROTOCOL ("-" for none), then speaks that protocol: `connection_init`, each payload
of the JSON list in turn (`subscribe`/`start` with ids 1, 2, ... read until its `complete` or
`error`), then a Close. With no subprotocol each entry is sent as it is and its echo read.
Prints each server message it read, one JSON line each, then `done`.
"""
import asyncio
import json
import os
import socket
import sys

SUBPROTOCOLS = ("graphql-transport-ws", "graphql-ws")


def schema():
    from graphql import GraphQLError, build_schema

    built = build_schema("""
        type Query { hello: String }
        type Mutation { poke: Boolean }
        type Subscription { tick(count: Int!): Int broken: Int }
    """)

    async def ticks(root, info, count):
        for value in range(1, count + 1):
            yield value

    async def once(root, info):
        yield 1

    def refuse(event, info):
        raise GraphQLError("broken stream", extensions={"code": "BROKEN"})

    fields = built.subscription_type.fields
    fields["tick"].subscribe = ticks
    fields["tick"].resolve = lambda event, info, count: event
    fields["broken"].subscribe = once
    fields["broken"].resolve = refuse
    return built


async def run_operation(built, payload):
    """The results of one operation: a list of ExecutionResults, or a list of errors (invalid)."""
    from graphql import OperationType, get_operation_ast, graphql, parse, subscribe, validate

    try:
        document = parse(payload.get("query") or "")
    except Exception as error:  # a syntax error
        return None, [{"message": str(error)}]
    errors = validate(built, document)
    if errors:
        return None, [error.formatted for error in errors]
    operation = get_operation_ast(document, payload.get("operationName"))
    if operation is not None and operation.operation == OperationType.SUBSCRIPTION:
        stream = await subscribe(built, document, root_value={}, variable_values=payload.get("variables"),
                                 operation_name=payload.get("operationName"))
        if hasattr(stream, "__aiter__"):
            return [result async for result in stream], None
        return [stream], None
    result = await graphql(built, payload.get("query"), root_value={"hello": "hi", "poke": True},
                           variable_values=payload.get("variables"), operation_name=payload.get("operationName"))
    return [result], None


def app_for(built):
    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "websocket":
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await receive()  # websocket.connect
        offered = scope.get("subprotocols") or []
        chosen = next((name for name in offered if name in SUBPROTOCOLS), None)
        if scope["path"] == "/plain" or chosen is None:
            await send({"type": "websocket.accept"})
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    return
                await send({"type": "websocket.send", "text": message.get("text") or ""})
        await send({"type": "websocket.accept", "subprotocol": chosen})
        legacy = chosen == "graphql-ws"

        async def out(value):
            await send({"type": "websocket.send", "text": json.dumps(value)})

        while True:
            message = await receive()
            if message["type"] != "websocket.receive":
                return
            value = json.loads(message.get("text") or "{}")
            kind = value.get("type")
            if kind == "connection_init":
                await out({"type": "connection_ack"})
                if legacy:
                    await out({"type": "ka"})
            elif kind == "ping":
                await out({"type": "pong"})
            elif kind in ("subscribe", "start"):
                results, errors = await run_operation(built, value.get("payload") or {})
                if errors is not None:
                    await out({"id": value["id"], "type": "error", "payload": errors[0] if legacy else errors})
                    if legacy:
                        await out({"id": value["id"], "type": "complete"})
                    continue
                for result in results:
                    await out({"id": value["id"], "type": "data" if legacy else "next", "payload": result.formatted})
                await out({"id": value["id"], "type": "complete"})
            elif kind == "connection_terminate":
                await send({"type": "websocket.close", "code": 1000})
                return
    return app


def serve():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from hypercorn_serve import serve_until_stdin_closes
    serve_until_stdin_closes(app_for(schema()))


def client(proxy_port, origin_port, path, subprotocol, payloads):
    from wsproto import ConnectionType, WSConnection
    from wsproto.events import (AcceptConnection, CloseConnection, RejectConnection, Request, TextMessage)

    sock = socket.create_connection(("127.0.0.1", proxy_port), timeout=20)
    ws = WSConnection(ConnectionType.CLIENT)
    authority = "127.0.0.1:%d" % origin_port
    offered = [] if subprotocol == "-" else [subprotocol]
    sock.sendall(ws.send(Request(host=authority, target="http://%s%s" % (authority, path), subprotocols=offered)))
    pending = []

    def events():
        while True:
            while pending:
                yield pending.pop(0)
            data = sock.recv(65536)
            if not data:
                raise SystemExit("the connection closed")
            ws.receive_data(data)
            pending.extend(ws.events())

    stream = events()
    texts = []

    def next_message():
        text = ""
        for event in stream:
            if isinstance(event, CloseConnection):
                raise SystemExit("closed by the server")
            if isinstance(event, TextMessage):
                text += event.data
                if event.message_finished:
                    print(text, flush=True)
                    return json.loads(text) if text.startswith("{") else text

    def send(value):
        sock.sendall(ws.send(TextMessage(data=json.dumps(value) if not isinstance(value, str) else value)))

    for event in stream:
        if isinstance(event, RejectConnection):
            raise SystemExit("rejected: %s" % event.status_code)
        if isinstance(event, AcceptConnection):
            print(json.dumps({"accepted": event.subprotocol}), flush=True)
            break
    if subprotocol == "-":
        for payload in payloads:
            send(payload)
            next_message()
    else:
        legacy = subprotocol == "graphql-ws"
        send({"type": "connection_init", "payload": {}})
        while next_message().get("type") != "connection_ack":
            pass
        for number, payload in enumerate(payloads, start=1):
            ident = str(number)
            send({"id": ident, "type": "start" if legacy else "subscribe", "payload": payload})
            while True:
                message = next_message()
                if message.get("type") == "ka":
                    continue
                if message.get("id") == ident and message.get("type") in ("complete", "error"):
                    if message.get("type") == "error" and legacy:
                        next_message()  # its complete
                    break
        if legacy:
            send({"type": "connection_terminate"})
    sock.sendall(ws.send(CloseConnection(code=1000)))
    try:
        for event in stream:
            if isinstance(event, CloseConnection):
                break
    except SystemExit:
        pass
    sock.close()
    print("done", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve()
    elif sys.argv[1:2] == ["client"] and len(sys.argv) == 7:
        client(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], json.loads(sys.argv[6]))
    else:
        raise SystemExit(__doc__)
